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

export function createRunReads(c: EvaluationCollections): RunReads {
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
        cases = c.cases.find({ _id: { $in: caseIdsOf(run) } }).then((docs) => new Map(docs.map((d) => [d._id, d])));
        cases.catch(() => casesOfRun.delete(run._id));
        casesOfRun.set(run._id, cases);
      }
      // A case deleted since the run started is not in the map: read it to be sure.
      return (await cases).get(caseId) ?? (await c.cases.findOne({ _id: caseId }));
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
