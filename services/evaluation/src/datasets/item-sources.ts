/**
 * Dataset items copied from elsewhere in the organization (docs/datasets.md "Adding from
 * elsewhere"): an evaluation case (its input and expected output), a run (its input variables, and
 * its output as the expected output) and an annotation-queue item (its run's). Runs are read from
 * the execution service as the evaluation service acting in the dataset's organization only, so a
 * run of another organization is as missing as one that does not exist.
 */
import { DomainError, type FieldIssue } from "@kiln/kit/errors";
import { LIMITS } from "@kiln/kit/limits";
import type { Collection } from "@kiln/kit/store";
import type { Run } from "@kiln/proto/execution";
import { inOrganization, remoteCall } from "../access.js";
import type { RunReader } from "../review/item-content.js";
import type { ItemDoc } from "../review/review-store.js";
import type { CaseDoc } from "../store/evaluation-store.js";
import type { NewItem } from "./new-items.js";

export interface SourceIds {
  evaluationCaseIds: string[];
  runIds: string[];
  annotationItemIds: string[];
}

export interface ItemSourcesDeps {
  cases: Collection<CaseDoc>;
  annotationItems: Collection<ItemDoc>;
  runs: RunReader;
}

/** Issues of the request itself: something named, at most LIMITS.datasetSourcesPerRequest ids, none twice. */
export function sourceIssues(ids: SourceIds): FieldIssue[] {
  const all = [...ids.evaluationCaseIds, ...ids.runIds, ...ids.annotationItemIds];
  if (all.length === 0)
    return [{ field: "evaluationCaseIds", issue: "name at least one case, run or annotation item" }];
  if (all.length > LIMITS.datasetSourcesPerRequest)
    return [{ field: "runIds", issue: `at most ${LIMITS.datasetSourcesPerRequest} ids in all` }];
  const issues: FieldIssue[] = [];
  for (const field of ["evaluationCaseIds", "runIds", "annotationItemIds"] as const) {
    if (new Set(ids[field]).size !== ids[field].length) issues.push({ field, issue: "must not repeat an id" });
  }
  return issues;
}

/** What the run was sent (`{variables}`, `{input}` or `{inputs}`), and what it answered. */
function itemOfRun(run: Run, source: NonNullable<NewItem["source"]>): NewItem {
  const sent = run.input ? (JSON.parse(run.input.json) as Record<string, unknown>) : {};
  const input = sent.variables ?? sent.input ?? sent.inputs ?? {};
  const output = run.output ? (JSON.parse(run.output.json) as { text?: string; json?: unknown }) : undefined;
  const expectedOutput = output === undefined ? undefined : (output.json ?? output.text);
  return { input, ...(expectedOutput !== undefined && { expectedOutput }), source };
}

export function createItemSources(deps: ItemSourcesDeps) {
  async function runOf(organizationId: string, runId: string): Promise<Run | undefined> {
    try {
      return (await remoteCall(deps.runs.getRun({ id: runId, kind: "" }, inOrganization(organizationId)))).run;
    } catch (e) {
      if (e instanceof DomainError && (e.kind === "not_found" || e.kind === "invalid_argument")) return undefined;
      throw e;
    }
  }

  return {
    /** The items the sources make, in the order named (cases, runs, annotation items); issues name each missing one. */
    async itemsOf(organizationId: string, ids: SourceIds): Promise<{ items: NewItem[]; issues: FieldIssue[] }> {
      const issues: FieldIssue[] = [];
      const items: NewItem[] = [];
      const [cases, annotated] = await Promise.all([
        ids.evaluationCaseIds.length > 0
          ? deps.cases.find({ _id: { $in: ids.evaluationCaseIds }, organizationId })
          : Promise.resolve([]),
        ids.annotationItemIds.length > 0
          ? deps.annotationItems.find({ _id: { $in: ids.annotationItemIds }, organizationId })
          : Promise.resolve([]),
      ]);
      const caseOf = new Map(cases.map((k) => [k._id, k]));
      ids.evaluationCaseIds.forEach((id, i) => {
        const k = caseOf.get(id);
        if (!k)
          issues.push({ field: `evaluationCaseIds[${i}]`, issue: "is not an evaluation case of the organization" });
        else
          items.push({
            input: JSON.parse(k.inputJson),
            ...(k.expectedOutputJson !== null && { expectedOutput: JSON.parse(k.expectedOutputJson) }),
            source: { kind: "evaluation_case", id },
          });
      });
      for (const [i, id] of ids.runIds.entries()) {
        const run = await runOf(organizationId, id);
        if (!run) issues.push({ field: `runIds[${i}]`, issue: "is not a run of the organization" });
        else items.push(itemOfRun(run, { kind: "run", id }));
      }
      const itemOf = new Map(annotated.map((a) => [a._id, a]));
      for (const [i, id] of ids.annotationItemIds.entries()) {
        const field = `annotationItemIds[${i}]`;
        const a = itemOf.get(id);
        if (!a) issues.push({ field, issue: "is not an annotation-queue item of the organization" });
        else if (a.targetType !== "run")
          issues.push({ field, issue: "is a trace's item: only a run's item has an input" });
        else {
          const run = await runOf(organizationId, a.targetId);
          if (!run) issues.push({ field, issue: "its run no longer exists" });
          else items.push(itemOfRun(run, { kind: "annotation_item", id }));
        }
      }
      return { items, issues };
    },
  };
}

export type ItemSources = ReturnType<typeof createItemSources>;
