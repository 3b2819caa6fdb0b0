/**
 * The scoring jobs of online evaluation: the ONLINE_SCORES work queue, a job (a rule and the run
 * or generation span it scores), and what a scorer judges of its target.
 */
import { WORK_QUEUES } from "@kiln/contracts/bus-names";
import type { Bus, StreamSpec } from "@kiln/kit/bus";
import type { Observation } from "../domain/assertions.js";
import type { OnlineScoreDoc } from "./online-store.js";

/** The scoring jobs: a work queue, each job taken by one scorer. */
export const ONLINE_SCORES_STREAM: StreamSpec = {
  name: WORK_QUEUES.onlineScores.stream,
  subjects: [...WORK_QUEUES.onlineScores.subjects],
  retention: "workqueue",
  duplicateWindowMs: 120_000,
};

/** One scoring job: a rule and the run, or the generation span, it scores. */
export interface ScoreJob {
  ruleId: string;
  organizationId: string;
  runId?: string;
  traceId?: string;
  spanId?: string;
}

/** Queues the job once per (rule, target): the stream de-duplicates a repeat within its window. */
export async function queueScoreJob(bus: Bus, job: ScoreJob, targetKey: string): Promise<void> {
  const { run, generation } = WORK_QUEUES.onlineScores;
  await bus.publish(job.runId ? run : generation, JSON.stringify(job), {
    msgId: `${job.ruleId}:${targetKey}`,
  });
}

/** What a scorer judges: the run's (or generation's) output, input, and what it cost. */
export interface ScoredTarget {
  base: Pick<
    OnlineScoreDoc,
    | "targetKey"
    | "targetType"
    | "runId"
    | "traceId"
    | "spanId"
    | "promptId"
    | "skillId"
    | "agentId"
    | "versionId"
    | "label"
    | "runCostUsd"
    | "occurredAt"
  >;
  inputJson: string;
  observation: Observation;
}
