/**
 * Token-per-minute limits (docs/usage.md "Token-per-minute limits"): where every stored run starts,
 * next to the budgets, a run is refused (429 resource_exhausted naming the limit, Retry-After the
 * seconds until enough of the minute's tokens have left) while one of its limits has had its
 * tokens in the last minute: its API key's (carried by the key's principal) and its model's (a
 * deployment model's counts every organization's runs on it, a connection model's that
 * connection's). A key's window counts a run's tokens (input, cached input included, and output,
 * reasoning included) when the run finishes; a model's counts each provider call as it answers
 * (counting-registry.ts), so a route's target, a skill's steps and a tool loop's turns count on the
 * model that spent them. Per process, with no read on the way; the runs in flight when a limit is
 * crossed still finish and count.
 */
import { DomainError } from "@kiln/kit/errors";
import type { Principal } from "@kiln/kit/principal";
import { ProviderError, type TokenUsage } from "@kiln/models/provider";
import type { ResolvedModel } from "@kiln/models/registry";
import type { RoutedModel } from "@kiln/models/routes";
import type { RunDoc } from "../store/run-store.js";
import { createTokenWindow, type TokenWindow } from "./token-window.js";

/** One limit a run is admitted under. */
export interface TokenLimit {
  /** The window it is counted in: "api_key:<id>", "model:<id>" or "connection:<connection id>:<model id>". */
  window: string;
  /** What a refusal names in `details[].issue`: "api_key:<id>" or "model:<model id>". */
  issue: string;
  tokensPerMinute: number;
  /** A key's window counts a run when it finishes; a model's counts each call (counting-registry.ts). */
  counts: "run" | "call";
  /**
   * A route's: the limits of its targets, every one of which has one. The route's run is refused
   * only while every target's minute is spent; a spent target is skipped (held back) on the way.
   */
  anyOf?: readonly TokenLimit[];
}

/** The run about to start, as its limits see it. */
export interface LimitedRun {
  tokenLimits?: readonly TokenLimit[];
}

export interface TokenLimitsDeps {
  now?: () => number;
  /**
   * Windows kept at most (about 1 KB each); default 10,000. When full, the windows idle for a
   * minute go (they hold nothing), else the oldest made.
   */
  maxWindows?: number;
}

/** The tokens a usage counts: every input token (cached ones included) and every output token (reasoning included). */
export const tokensOf = (usage: Pick<TokenUsage, "inputTokens" | "outputTokens">): number =>
  Math.max(0, usage.inputTokens) + Math.max(0, usage.outputTokens);

/** The limit of the key a call was made with, when the key has one. */
export function apiKeyLimitOf(principal: Principal): TokenLimit | undefined {
  if (principal.type !== "api_key" || principal.tokensPerMinute === undefined) return undefined;
  const { id, tokensPerMinute } = principal;
  return { window: `api_key:${id}`, issue: `api_key:${id}`, tokensPerMinute, counts: "run" };
}

/**
 * The limit of a resolved model, when its entry has one. A route has none of its own: when every
 * one of its targets has a limit, its limit is theirs taken together (`anyOf`).
 */
export function modelLimitOf(
  model: Pick<ResolvedModel, "id" | "entry"> & Partial<Pick<RoutedModel, "targets">>,
): TokenLimit | undefined {
  if (model.targets) return routeLimitOf(model.id, model.targets);
  const { tokensPerMinute, connectionId } = model.entry;
  if (tokensPerMinute === undefined) return undefined;
  // A connection's model ids are its organization's own: the connection names the window.
  const window = connectionId ? `connection:${connectionId}:${model.id}` : `model:${model.id}`;
  return { window, issue: `model:${model.id}`, tokensPerMinute, counts: "call" };
}

function routeLimitOf(id: string, targets: readonly ResolvedModel[]): TokenLimit | undefined {
  const anyOf = targets.map(modelLimitOf);
  if (anyOf.length === 0 || anyOf.some((l) => l === undefined)) return undefined;
  const limits = anyOf as TokenLimit[];
  const tokensPerMinute = limits.reduce((sum, l) => sum + l.tokensPerMinute, 0);
  return { window: `route:${id}`, issue: `model:${id}`, tokensPerMinute, counts: "call", anyOf: limits };
}

/** A run's limits from those given (its key's, its models'), each window once; undefined for none (most runs). */
export function limitList(...limits: (TokenLimit | undefined)[]): TokenLimit[] | undefined {
  const present = limits.filter((l): l is TokenLimit => l !== undefined);
  if (present.length === 0) return undefined;
  return present.filter((l, i) => present.findIndex((o) => o.window === l.window) === i);
}

function limitName(limit: TokenLimit): string {
  const [kind, ...rest] = limit.issue.split(":");
  return `${kind === "api_key" ? "API key" : "model"} ${rest.join(":")}`;
}

export function createTokenLimits(deps: TokenLimitsDeps = {}) {
  const now = deps.now ?? Date.now;
  const maxWindows = deps.maxWindows ?? 10_000;
  const windows = new Map<string, TokenWindow>();

  function makeRoom(at: number) {
    for (const [name, w] of windows) if (w.lastCountedMs() <= at - 60_000) windows.delete(name);
    if (windows.size >= maxWindows) windows.delete(windows.keys().next().value as string);
  }

  function windowOf(name: string, at: number): TokenWindow {
    let w = windows.get(name);
    if (w) return w;
    if (windows.size >= maxWindows) makeRoom(at);
    w = createTokenWindow();
    windows.set(name, w);
    return w;
  }

  /** What a spent limit says of itself: "model m allows N tokens a minute and U were used in the last minute". */
  function spent(limit: TokenLimit, at: number): string {
    const used = windows.get(limit.window)?.total(at) ?? 0;
    return `${limitName(limit)} allows ${limit.tokensPerMinute} tokens a minute and ${used} were used in the last minute`;
  }

  function refusal(limit: TokenLimit, at: number, seconds: number): DomainError {
    return new DomainError(
      "resource_exhausted",
      `${spent(limit, at)}; retry in ${seconds} s`,
      [{ field: "tokensPerMinute", issue: limit.issue }],
      seconds,
    );
  }

  /** The seconds until `limit`'s window is under it again; 0 while it is. */
  function secondsSpent(limit: TokenLimit, at: number): number {
    return windows.get(limit.window)?.secondsUntilUnder(at, limit.tokensPerMinute) ?? 0;
  }

  function routeRefusal(limit: TokenLimit, targets: readonly TokenLimit[], at: number): DomainError | undefined {
    const waits = targets.map((t) => secondsSpent(t, at));
    if (waits.some((s) => s === 0)) return undefined;
    const seconds = Math.min(...waits);
    return new DomainError(
      "resource_exhausted",
      `every target of ${limitName(limit)} has used its tokens a minute (${targets.map((t) => `${limitName(t)}: ${t.tokensPerMinute}`).join(", ")}); retry in ${seconds} s`,
      [{ field: "tokensPerMinute", issue: limit.issue }],
      seconds,
    );
  }

  return {
    /** Admits the run or refuses it (429 naming the first of its limits whose minute is spent). */
    admit(run: LimitedRun): void {
      if (!run.tokenLimits?.length) return;
      const at = now();
      for (const limit of run.tokenLimits) {
        if (limit.anyOf) {
          const refused = routeRefusal(limit, limit.anyOf, at);
          if (refused) throw refused;
          continue;
        }
        const seconds = secondsSpent(limit, at);
        if (seconds > 0) throw refusal(limit, at, seconds);
      }
    },
    /**
     * A route's target whose own minute is spent, as the failure the route skips it with (a 429
     * with the wait); undefined for a target free to take the call (or with no limit).
     */
    holdBack(target: Pick<ResolvedModel, "id" | "entry">): ProviderError | undefined {
      const limit = modelLimitOf(target);
      if (!limit) return undefined;
      const at = now();
      const seconds = secondsSpent(limit, at);
      if (seconds === 0) return undefined;
      return new ProviderError("provider_error", `${spent(limit, at)}; held back for ${seconds} s`, {
        provider: target.entry.provider,
        model: target.entry.model,
        status: 429,
        retryAfterMs: seconds * 1_000,
      });
    },
    /** The run ended: a stored run's tokens count in its key's window (an agent run's steps count on their own). */
    finished(run: LimitedRun, doc: RunDoc | undefined): void {
      if (!doc || !run.tokenLimits?.length || doc.kind === "agent") return;
      // A run answered from the response cache spent no provider tokens.
      if (doc.cache?.status === "hit") return;
      const tokens = tokensOf(doc.usage);
      if (tokens === 0) return;
      const at = now();
      for (const limit of run.tokenLimits) if (limit.counts === "run") windowOf(limit.window, at).add(at, tokens);
    },
    /** A provider call on a model with a limit answered with `tokens`. */
    counted(limit: TokenLimit, tokens: number): void {
      if (tokens <= 0) return;
      const at = now();
      windowOf(limit.window, at).add(at, tokens);
    },
    /** The tokens a window holds now (tests, views). */
    used(window: string): number {
      return windows.get(window)?.total(now()) ?? 0;
    },
  };
}

export type TokenLimits = ReturnType<typeof createTokenLimits>;
