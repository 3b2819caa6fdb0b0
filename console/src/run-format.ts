/**
 * How the console writes a run's numbers. Costs: "$0" for nothing, "<$0.0001" below a hundredth
 * of a cent, four decimals below a cent ("$0.0059"), two from a cent up ("$1.25"); "unpriced"
 * when a model without a price took part (docs/api.md "Runs": null, never 0).
 */
export function formatCost(usd: number | null): string {
  if (usd === null) return "unpriced";
  if (usd === 0) return "$0";
  if (usd < 0.0001) return "<$0.0001";
  if (usd < 0.01) return `$${usd.toFixed(4)}`;
  return `$${usd.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
}

/** The exact cost, for a tooltip. */
export const exactCost = (usd: number | null) => (usd === null ? "no price for a model of this run" : `$${usd}`);

const integer = new Intl.NumberFormat("en-US");

export const formatCount = (n: number) => integer.format(n);

/** "2,006 in (1,920 cached) / 300 out (192 reasoning)": the parts only when the provider reported them. */
export function formatTokens(usage: {
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens?: number;
  cacheWriteInputTokens?: number;
  reasoningTokens?: number;
}): string {
  const parts = (list: [number | undefined, string][]) => {
    const said = list.filter(([n]) => n !== undefined).map(([n, what]) => `${integer.format(n ?? 0)} ${what}`);
    return said.length > 0 ? ` (${said.join(", ")})` : "";
  };
  const input = parts([
    [usage.cachedInputTokens, "cached"],
    [usage.cacheWriteInputTokens, "cache write"],
  ]);
  const output = parts([[usage.reasoningTokens, "reasoning"]]);
  return `${integer.format(usage.inputTokens)} in${input} / ${integer.format(usage.outputTokens)} out${output}`;
}

/** "840 ms" below a second, "1.2 s" from there. */
export function formatLatency(ms: number): string {
  return ms < 1000 ? `${integer.format(ms)} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
}

const dateTime = new Intl.DateTimeFormat("en-GB", { dateStyle: "medium", timeStyle: "medium" });

export const formatDate = (iso: string) => dateTime.format(new Date(iso));

const day = new Intl.DateTimeFormat("en-GB", { dateStyle: "medium" });

/** "27 Nov 2026". */
export const formatDay = (iso: string) => day.format(new Date(iso));

/** "1 prompt", "2 prompts", "1,200 prompts". */
export const plural = (n: number, one: string, many = `${one}s`) => `${integer.format(n)} ${n === 1 ? one : many}`;
