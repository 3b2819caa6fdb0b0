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
import type { TokenUsage } from "@kiln/models/provider";
import type { ResolvedModel } from "@kiln/models/registry";
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

/** The limit of a resolved model, when its entry has one (a route has none of its own). */
export function modelLimitOf(model: Pick<ResolvedModel, "id" | "entry">): TokenLimit | undefined {
  const { tokensPerMinute, connectionId } = model.entry;
  if (tokensPerMinute === undefined) return undefined;
  // A connection's model ids are its organization's own: the connection names the window.
  const window = connectionId ? `connection:${connectionId}:${model.id}` : `model:${model.id}`;
  return { window, issue: `model:${model.id}`, tokensPerMinute, counts: "call" };
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

  function refusal(limit: TokenLimit, used: number, seconds: number): DomainError {
    return new DomainError(
      "resource_exhausted",
      `${limitName(limit)} allows ${limit.tokensPerMinute} tokens a minute and ${used} were used in the last minute; retry in ${seconds} s`,
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
        const w = windows.get(limit.window);
        if (!w) continue;
        const seconds = w.secondsUntilUnder(at, limit.tokensPerMinute);
        if (seconds > 0) throw refusal(limit, w.total(at), seconds);
      }
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
