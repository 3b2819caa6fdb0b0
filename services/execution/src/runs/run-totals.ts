import type { CostNote } from "@kiln/models/catalog";
import { sumUsage } from "@kiln/models/usage";
import type { RunDoc } from "../store/run-store.js";
import type { ToolCallRecord } from "./prompt-execution.js";

/** What a part of a run (an execution, an agent step) adds to the run's totals. */
export interface RunPart {
  provider: string | null;
  model: string | null;
  usage: RunDoc["usage"];
  /** null when the part has no price. */
  estimatedCostUsd: number | null;
  /** What the part's estimate assumed; absent when nothing. */
  costNotes?: CostNote[];
  toolCalls: ToolCallRecord[];
}

/**
 * A run's totals over its parts (api.md "Runs"), for every kind of run: usage (class by class),
 * cost and tool calls summed, and the parts' cost notes each once; the cost is null when any part
 * has no price; provider and model only when every part agrees.
 */
export function runTotalsOf(parts: RunPart[], createdAt: Date, completedAt: Date) {
  const usage = sumUsage(parts.map((p) => p.usage));
  const notes = [...new Set(parts.flatMap((p) => p.costNotes ?? []))];
  let cost: number | null = 0;
  for (const p of parts) {
    cost = cost === null || p.estimatedCostUsd === null ? null : cost + p.estimatedCostUsd;
  }
  const toolCalls = parts.flatMap((p) => p.toolCalls);
  const counts = new Map<string, number>();
  for (const call of toolCalls) counts.set(call.toolKey, (counts.get(call.toolKey) ?? 0) + 1);
  const agree = (key: "provider" | "model") =>
    parts.length > 0 && parts.every((p) => p[key] === parts[0]?.[key]) ? (parts[0]?.[key] ?? null) : null;
  return {
    provider: agree("provider"),
    model: agree("model"),
    usage,
    estimatedCostUsd: cost,
    ...(notes.length > 0 ? { costNotes: notes } : {}),
    latencyMs: Math.max(0, completedAt.getTime() - createdAt.getTime()),
    toolCallCount: toolCalls.length,
    toolCallCounts: [...counts].map(([toolKey, count]) => ({ toolKey, count })),
    toolCallsJson: JSON.stringify(toolCalls),
  };
}
