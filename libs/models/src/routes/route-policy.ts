/**
 * The pure rules of a model route (docs/providers.md "Routes"): which failures move on to the next
 * target, and the order a route tries its targets in.
 */
import type { ProviderError } from "../provider.js";

/** The failure kinds a route may move on after (`retryOn`); every other failure fails at once. */
export const RETRY_KINDS = ["429", "5xx", "529", "timeout", "connection"] as const;
export type RetryKind = (typeof RETRY_KINDS)[number];

export type RouteStrategy = "fallback" | "weighted";

export interface RouteTarget {
  /** A model id of the catalog ("openai/gpt-4o-mini"); never another route. */
  model: string;
  /** The share of runs a weighted route starts on this target (default 1); unused by fallback. */
  weight?: number;
}

/**
 * The transient kind of a provider failure, or undefined for one that would fail on any target
 * the same way or says the request itself is wrong (400, 401, 403, 404, 422, ...).
 * A failure with no HTTP status is a connection failure (refused, reset, broken off).
 */
export function retryKindOf(e: ProviderError): RetryKind | undefined {
  if (e.kind === "provider_timeout") return "timeout";
  const status = e.status;
  if (status === undefined) return "connection";
  if (status === 429) return "429";
  if (status === 529) return "529";
  if (status === 408) return "timeout";
  if (status >= 500 && status <= 599) return "5xx";
  return undefined;
}

/**
 * The order a call tries the targets in: as listed for fallback; for weighted, one target drawn by
 * weight, then the rest drawn the same way from what is left (zero weights last, as listed).
 * `random` returns [0, 1) (Math.random, or seededRandom for reproducible spreads).
 */
export function targetOrder(strategy: RouteStrategy, targets: readonly RouteTarget[], random: () => number): number[] {
  const indexes = targets.map((_, i) => i);
  if (strategy === "fallback") return indexes;
  const order: number[] = [];
  let left = indexes.filter((i) => weightOf(targets[i]) > 0);
  while (left.length > 0) {
    const total = left.reduce((sum, i) => sum + weightOf(targets[i]), 0);
    let point = random() * total;
    let pick = left[left.length - 1] ?? 0;
    for (const i of left) {
      point -= weightOf(targets[i]);
      if (point < 0) {
        pick = i;
        break;
      }
    }
    order.push(pick);
    left = left.filter((i) => i !== pick);
  }
  return [...order, ...indexes.filter((i) => weightOf(targets[i]) <= 0)];
}

const weightOf = (t: RouteTarget | undefined): number => t?.weight ?? 1;

/** A small seeded generator (mulberry32) of numbers in [0, 1): the same seed, the same sequence. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
