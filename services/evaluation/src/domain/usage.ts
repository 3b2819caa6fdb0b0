/**
 * Token usage of a run, an attempt or a target's runs summed: the classes of execution's runs
 * (docs/providers.md "How usage is priced"): cached, cache-write and reasoning tokens are parts
 * of the input and output tokens, each absent while no run reported it.
 */

import type { TokenUsage } from "@kiln/models/provider";
import { OPTIONAL_CLASSES as PARTS } from "@kiln/models/usage";

export type Usage = TokenUsage;
export { addUsage } from "@kiln/models/usage";

type UsageMessage = { inputTokens: bigint | number; outputTokens: bigint | number } & {
  [K in (typeof PARTS)[number]]?: bigint | number;
};

/** A Usage message (execution's or evaluation's, int64 as bigint) as numbers; unset parts stay absent. */
export function usageOfMessage(u: UsageMessage | undefined): Usage {
  const usage: Usage = { inputTokens: Number(u?.inputTokens ?? 0), outputTokens: Number(u?.outputTokens ?? 0) };
  for (const key of PARTS) {
    const n = u?.[key];
    if (n !== undefined) usage[key] = Number(n);
  }
  return usage;
}

/** A Usage as its message (int64 as bigint); absent parts stay unset. */
export function usageToMessage(u: Usage) {
  const message: { inputTokens: bigint; outputTokens: bigint } & { [K in (typeof PARTS)[number]]?: bigint } = {
    inputTokens: BigInt(Math.round(u.inputTokens)),
    outputTokens: BigInt(Math.round(u.outputTokens)),
  };
  for (const key of PARTS) {
    const n = u[key];
    if (n !== undefined) message[key] = BigInt(Math.round(n));
  }
  return message;
}
