/**
 * What the workers read of the runs they work on, each read once per process (what an item needs
 * of a run and its cases does not change; cancellation is read from the run's progress document).
 */
import { LRUCache } from "lru-cache";
import {
  type CaseDoc,
  caseIdsOf,
  type EvaluationCollections,
  type EvaluationRunDoc,
} from "../store/evaluation-store.js";

export interface RunReads {
  /** The run; a queued run is marked running on first sight. Null when it does not exist. */
  runOf(id: string): Promise<EvaluationRunDoc | null>;
  /** One case of the run; null when it no longer exists. */
  caseOf(run: EvaluationRunDoc, caseId: string): Promise<CaseDoc | null>;
}

/**
 * A run's cases: the skill's, or a dataset's items read as cases with the run's assertions (a
 * prompt evaluation's), else none (an item's expected output, when it has one, is judged as
 * `equals`, as a case's is).
 */
async function casesOfIn(c: EvaluationCollections, run: EvaluationRunDoc): Promise<CaseDoc[]> {
  if (!run.datasetId) return c.cases.find({ _id: { $in: caseIdsOf(run) } });
  const items = await c.datasetItems.find({
    _id: { $in: caseIdsOf(run) },
    datasetId: run.datasetId,
    organizationId: run.organizationId,
  });
  return items.map((i) => ({
    _id: i._id,
    skillId: run.skillId,
    organizationId: i.organizationId,
    name: "",
    inputJson: i.inputJson,
    expectedOutputJson: i.expectedOutputJson,
    // A prompt evaluation's assertions judge every item (its expected output is the judges' reference).
    assertionsJson: run.assertionsJson ?? "[]",
    createdAt: i.createdAt,
  }));
}

export function createRunReads(c: EvaluationCollections): RunReads {
  const casesOf = (run: EvaluationRunDoc) => casesOfIn(c, run);
  /**
   * The cases of the runs this process is working on, each run's read in one query when its first
   * item arrives (cases cannot change): one read per case would scan the cases on FerretDB.
   */
  const casesOfRun = new LRUCache<string, Promise<Map<string, CaseDoc>>>({ max: 16 });
  /** A run document holds every case id, and FerretDB decodes the whole row on every read. */
  const runs = new LRUCache<string, Promise<EvaluationRunDoc | null>>({ max: 16 });

  return {
    async caseOf(run, caseId) {
      let cases = casesOfRun.get(run._id);
      if (!cases) {
        cases = casesOf(run).then((docs) => new Map(docs.map((d) => [d._id, d])));
        cases.catch(() => casesOfRun.delete(run._id));
        casesOfRun.set(run._id, cases);
      }
      // A case deleted since the run started is not in the map: read it to be sure (dataset items never change).
      return (await cases).get(caseId) ?? (run.datasetId ? null : await c.cases.findOne({ _id: caseId }));
    },

    runOf(id) {
      let found = runs.get(id);
      if (!found) {
        found = c.runs.findOne({ _id: id }).then(async (run) => {
          if (run?.status === "queued") {
            await c.runs.updateOne({ _id: run._id, status: "queued" }, { $set: { status: "running" } });
          }
          return run;
        });
        found.then(
          (run) => run ?? runs.delete(id),
          () => runs.delete(id),
        );
        runs.set(id, found);
      }
      return found;
    },
  };
}
