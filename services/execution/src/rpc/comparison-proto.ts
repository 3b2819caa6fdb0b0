import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { jsonText } from "@kiln/kit/json-text";
import type { CompareAgentRunsResponseSchema } from "@kiln/proto/execution";
import type { AgentRunComparison } from "../runs/agent-compare.js";
import { usageToProto as usageOf } from "./run-proto.js";

/** The comparison of agent runs as its messages; a run that did not execute a step has no entry in `byRun`. */
export function comparisonToProto(c: AgentRunComparison): MessageInitShape<typeof CompareAgentRunsResponseSchema> {
  return {
    runs: c.runs.map((r) => ({ ...r, createdAt: timestampFromDate(r.createdAt) })),
    steps: c.steps.map((s) => ({
      stepId: s.stepId,
      byRun: Object.fromEntries(
        Object.entries(s.byRun).flatMap(([runId, step]) =>
          step
            ? [
                [
                  runId,
                  {
                    status: step.status,
                    output: step.output === null ? undefined : jsonText(step.output),
                    usage: usageOf(step.usage),
                    latencyMs: BigInt(step.latencyMs),
                  },
                ],
              ]
            : [],
        ),
      ),
      outputsEqual: s.outputsEqual,
    })),
    totals: Object.fromEntries(
      Object.entries(c.totals).map(([runId, t]) => [
        runId,
        { usage: usageOf(t.usage), estimatedCostUsd: t.estimatedCostUsd ?? undefined, latencyMs: BigInt(t.latencyMs) },
      ]),
    ),
  };
}
