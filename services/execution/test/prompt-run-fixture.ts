import { runDocOf } from "../src/runs/run-record.js";
import type { RunDoc } from "../src/store/run-store.js";

/** A stored, succeeded prompt run for tests of what happens to runs once stored (events, relays). */
export function promptRunFixture(id: string, organizationId: string, at = new Date()): RunDoc {
  return runDocOf({
    id,
    kind: "prompt",
    organizationId,
    input: { variables: {} },
    createdAt: at,
    completedAt: at,
    promptId: "prm_x",
    promptVersionId: "pv_x",
    steps: [],
    single: {
      status: "succeeded",
      output: { text: `answer of ${id}` },
      provider: "local",
      model: "local/echo",
      usage: { inputTokens: 1, outputTokens: 2 },
      estimatedCostUsd: 0,
      latencyMs: 1,
      toolCalls: [],
    },
  });
}
