/** What starting an evaluation run takes, a skill's (runs.ts) or a prompt's (prompt-evaluations.ts). */
import { invalidArgument } from "@kiln/kit/errors";
import type { DatasetModule } from "./datasets/dataset-module.js";
import type { EvaluationDeps } from "./evaluation-deps.js";
import type { EvaluationRunDoc } from "./store/evaluation-store.js";
import { publishWork } from "./work/work-queue.js";

/** Most attempts per case and target in one run. */
export const MAX_REPEATS = 20;

/** What a run on a dataset reads of it (datasets/dataset-items.ts). */
export type DatasetReader = Pick<DatasetModule, "itemIdsAt">;

/** The attempts per case and target a start asks for (0: 1), or a 400 on `repeats`. */
export function repeatsOf(requested: number | undefined): number {
  const repeats = requested || 1;
  if (!Number.isInteger(repeats) || repeats < 1 || repeats > MAX_REPEATS) {
    throw invalidArgument(`repeats must be an integer from 1 to ${MAX_REPEATS}`, [
      { field: "repeats", issue: `must be an integer from 1 to ${MAX_REPEATS}` },
    ]);
  }
  return repeats;
}

/**
 * Stores a new run (queued, work not yet published), then publishes one work message per case ×
 * target. When the bus does not take them, the run stays queued and the relay publishes later.
 */
export async function storeAndPublish(deps: EvaluationDeps, run: EvaluationRunDoc): Promise<EvaluationRunDoc> {
  await deps.collections.runs.insertOne(run);
  try {
    await publishWork(deps.collections.runs, deps.bus, run);
  } catch (err) {
    deps.logger.warn({ err, evaluationRunId: run._id }, "evaluation work not published yet; the relay will retry");
  }
  return run;
}
