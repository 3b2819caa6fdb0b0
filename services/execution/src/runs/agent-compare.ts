/** Agent runs side by side: their steps aligned by id, outputs compared, totals per run. */
import { isDeepStrictEqual } from "node:util";
import { invalidArgument } from "@kiln/kit/errors";
import type { RunDoc } from "../store/run-store.js";
import { stepRecordsOf } from "./agent-record.js";
import type { StepOutput } from "./bindings.js";
import type { AgentStepRecord } from "./workflow-engine.js";

export interface AgentRunComparison {
  runs: { id: string; agentId: string; agentVersionId: string; status: string; createdAt: Date }[];
  steps: {
    stepId: string;
    byRun: Record<
      string,
      { status: string; output: StepOutput | null; usage: AgentStepRecord["usage"]; latencyMs: number } | null
    >;
    outputsEqual: boolean;
  }[];
  totals: Record<string, { usage: RunDoc["usage"]; estimatedCostUsd: number | null; latencyMs: number }>;
}

/** Compares runs already loaded and authorized (compare checks how many, and that they share an organization). */
const MIN_COMPARED = 2;
const MAX_COMPARED = 10;

/** The ids a comparison may take: 2 to 10, none twice. */
export function checkComparedIds(ids: readonly string[]): void {
  if (ids.length < MIN_COMPARED || ids.length > MAX_COMPARED) {
    throw invalidArgument(`compare ${MIN_COMPARED} to ${MAX_COMPARED} runs`, [
      { field: "runIds", issue: `must list ${MIN_COMPARED} to ${MAX_COMPARED} run ids` },
    ]);
  }
  if (new Set(ids).size !== ids.length) {
    throw invalidArgument("a run is listed twice", [{ field: "runIds", issue: "must not repeat an id" }]);
  }
}

/** Runs of one organization side by side (runs of several are refused). */
export function compareAgentRuns(runs: RunDoc[]): AgentRunComparison {
  if (new Set(runs.map((r) => r.organizationId)).size > 1) {
    throw invalidArgument("the runs belong to different organizations", [
      { field: "runIds", issue: "must be runs of one organization" },
    ]);
  }
  // Steps aligned by id in order of first appearance; a step executed twice (a loop) shows its last execution.
  const order: string[] = [];
  const perRun = runs.map((run) => {
    const byStep = new Map<string, AgentStepRecord>();
    for (const s of stepRecordsOf(run)) {
      if (!order.includes(s.stepId)) order.push(s.stepId);
      byStep.set(s.stepId, s);
    }
    return { run, byStep };
  });
  return {
    runs: runs.map((r) => ({
      id: r._id,
      agentId: r.agentId ?? "",
      agentVersionId: r.agentVersionId ?? "",
      status: r.status,
      createdAt: r.createdAt,
    })),
    steps: order.map((stepId) => {
      const found = perRun.map(({ byStep }) => byStep.get(stepId));
      const first = found[0];
      return {
        stepId,
        byRun: Object.fromEntries(
          perRun.map(({ run, byStep }) => {
            const s = byStep.get(stepId);
            return [run._id, s ? { status: s.status, output: s.output, usage: s.usage, latencyMs: s.latencyMs } : null];
          }),
        ),
        outputsEqual: found.every((s) => s !== undefined && isDeepStrictEqual(s.output, first?.output)),
      };
    }),
    totals: Object.fromEntries(
      runs.map((r) => [r._id, { usage: r.usage, estimatedCostUsd: r.estimatedCostUsd, latencyMs: r.latencyMs }]),
    ),
  };
}
