/**
 * A model route as one model (docs/providers.md "Routes"): `generate` tries the route's targets in
 * the order of its strategy, moves on after the failures its `retryOn` names, skips targets whose
 * circuit breaker is open, and records every attempt. Pure: the targets come from a `resolve`
 * function, the breakers and the random source from the caller.
 */
import { performance } from "node:perf_hooks";
import type { CatalogModel } from "../model-catalog.js";
import { isProviderError, type ModelRequest, type ModelResult, ProviderError } from "../provider.js";
import type { ResolvedModel } from "../provider-registry.js";
import type { BreakerBoard } from "./circuit-breaker.js";
import {
  RETRY_KINDS,
  type RetryKind,
  type RouteStrategy,
  type RouteTarget,
  retryKindOf,
  targetOrder,
} from "./route-policy.js";

export interface RouteDefinition {
  /** The route's name: it runs as the model "route/<name>". */
  name: string;
  strategy: RouteStrategy;
  targets: readonly RouteTarget[];
  /** Default every kind. */
  retryOn?: readonly RetryKind[];
  /** Bounds each attempt (its provider's own retries included); default the provider's timeout. */
  attemptTimeoutMs?: number;
}

export interface RouteAttempt {
  model: string;
  status: "succeeded" | "failed" | "skipped";
  latencyMs: number;
  error?: { code: string; message: string };
}

export interface RouteOptions {
  /** A target's model (throws for one that cannot be used: unknown, or no credentials). */
  resolve(modelId: string): ResolvedModel;
  breakers: BreakerBoard;
  /** The breaker of a target (default its model id; the execution service adds the organization). */
  breakerKey?: (modelId: string) => string;
  /** [0, 1); default Math.random. */
  random?: () => number;
  /**
   * The provider retries of an attempt that has another target after it (default 0: moving on is
   * the route's retry); the last target tried keeps its provider's configured retries.
   */
  retriesBeforeLast?: number;
  /**
   * A target the caller holds back now, with why (e.g. its token-per-minute limit is spent: a
   * ProviderError with status 429 and retryAfterMs): skipped without a call, as an open breaker's
   * is, and moved past whatever `retryOn` says; the route's failure when no target answers.
   */
  holdBack?: (target: ResolvedModel) => ProviderError | undefined;
}

/** What a routed call answered with: its attempts and the target that answered. */
export interface RoutedAnswer {
  route: string;
  attempts: RouteAttempt[];
  answered: ResolvedModel;
}

export type RoutedResult = ModelResult & { routed: RoutedAnswer };

/** A routed call that failed: the last failure, with every attempt and the last target tried. */
export class RouteFailure extends ProviderError {
  readonly route: string;
  readonly attempts: RouteAttempt[];
  /** The last target tried (the first target when every one was skipped). */
  readonly last: ResolvedModel;

  constructor(route: string, attempts: RouteAttempt[], last: ResolvedModel, cause: ProviderError | undefined) {
    super(
      cause?.kind ?? "provider_error",
      cause?.message ?? `every target of route "${route}" is skipped by its circuit breaker`,
      {
        provider: last.entry.provider,
        model: last.entry.model,
        status: cause?.status,
        retries: cause?.retries,
        retryAfterMs: cause?.retryAfterMs,
        cause,
      },
    );
    this.route = route;
    this.attempts = attempts;
    this.last = last;
  }
}

/** The routed answer a call result carries, when the call went through a route. */
export const routedAnswerOf = (r: ModelResult): RoutedAnswer | undefined => (r as Partial<RoutedResult>).routed;

export interface RoutedModel extends ResolvedModel {
  route: RouteDefinition;
  /** The targets that could be resolved, in the route's order. */
  targets: readonly ResolvedModel[];
  generate(request: Omit<ModelRequest, "model">): Promise<RoutedResult>;
}

/**
 * The route as a ResolvedModel whose id is "route/<name>" and whose capabilities are what every
 * usable target has. Targets that cannot be resolved now are attempts that fail; when none can,
 * this throws the first target's error.
 */
export function createRoutedModel(route: RouteDefinition, options: RouteOptions): RoutedModel {
  const resolved = route.targets.map((t) => {
    try {
      return { model: t.model, resolved: options.resolve(t.model) };
    } catch (error) {
      return { model: t.model, error };
    }
  });
  const usable = resolved.flatMap((t) => (t.resolved ? [t.resolved] : []));
  const firstUsable = usable[0];
  if (!firstUsable) throw resolved[0]?.error ?? new Error(`route "${route.name}" has no targets`);
  const first: ResolvedModel = firstUsable;
  const retryOn = new Set<RetryKind>(route.retryOn ?? RETRY_KINDS);
  const keyOf = options.breakerKey ?? ((m: string) => m);
  const random = options.random ?? Math.random;
  const entry: CatalogModel = {
    id: `route/${route.name}`,
    provider: "route",
    model: route.name,
    available: true,
    capabilities: {
      tools: usable.every((m) => m.entry.capabilities.tools),
      jsonSchema: usable.every((m) => m.entry.capabilities.jsonSchema),
      input: first.entry.capabilities.input.filter((i) => usable.every((m) => m.entry.capabilities.input.includes(i))),
    },
    pricing: { inputPerMTokUsd: null, outputPerMTokUsd: null },
  };

  async function generate(request: Omit<ModelRequest, "model">): Promise<RoutedResult> {
    const attempts: RouteAttempt[] = [];
    const order = targetOrder(route.strategy, route.targets, random);
    const deadline = request.timeoutMs !== undefined ? performance.now() + request.timeoutMs : undefined;
    let streamed = false;
    let lastTried: ResolvedModel = first;
    let lastError: ProviderError | undefined;
    const fail = (cause: ProviderError | undefined) => new RouteFailure(route.name, attempts, lastTried, cause);
    for (const [position, index] of order.entries()) {
      const target = resolved[index];
      if (!target) continue;
      if (!target.resolved) {
        attempts.push({ model: target.model, status: "failed", latencyMs: 0, error: unusable(target.error) });
        continue;
      }
      const held = options.holdBack?.(target.resolved);
      if (held) {
        attempts.push({ model: target.model, status: "skipped", latencyMs: 0, error: errorOf(held) });
        lastError ??= held;
        continue;
      }
      const key = keyOf(target.model);
      const admission = options.breakers.admit(key);
      if (admission === "skip") {
        attempts.push({ model: target.model, status: "skipped", latencyMs: 0 });
        continue;
      }
      lastTried = target.resolved;
      const isLast = order.slice(position + 1).every((i) => resolved[i]?.resolved === undefined);
      const started = performance.now();
      const attemptSignal = route.attemptTimeoutMs ? AbortSignal.timeout(route.attemptTimeoutMs) : undefined;
      const remaining = deadline !== undefined ? Math.max(1, deadline - performance.now()) : undefined;
      const timeoutMs = minDefined(route.attemptTimeoutMs, remaining);
      try {
        const result = await target.resolved.generate({
          ...request,
          ...(timeoutMs !== undefined ? { timeoutMs } : {}),
          ...(isLast ? {} : { maxRetries: options.retriesBeforeLast ?? 0 }),
          signal: combined(request.signal, attemptSignal),
          ...(request.onDelta
            ? {
                onDelta: (delta) => {
                  streamed = true;
                  request.onDelta?.(delta);
                },
              }
            : {}),
        });
        options.breakers.succeeded(key);
        attempts.push({ model: target.model, status: "succeeded", latencyMs: elapsed(started) });
        return { ...result, routed: { route: route.name, attempts, answered: target.resolved } };
      } catch (e) {
        // The caller's own abort or deadline ends the call: not the target's failure.
        if (request.signal?.aborted) {
          options.breakers.released(key);
          if (isProviderError(e)) {
            attempts.push({ model: target.model, status: "failed", latencyMs: elapsed(started), error: errorOf(e) });
            throw fail(e);
          }
          throw e;
        }
        const error = isProviderError(e)
          ? e
          : attemptSignal?.aborted
            ? attemptTimedOut(target.resolved, route, e)
            : undefined;
        if (!error) {
          options.breakers.released(key);
          throw e;
        }
        attempts.push({ model: target.model, status: "failed", latencyMs: elapsed(started), error: errorOf(error) });
        lastError = error;
        const kind = retryKindOf(error);
        if (kind) options.breakers.failed(key);
        else options.breakers.released(key);
        // Once a piece went to the client, another target cannot take the turn over.
        if (streamed || !kind || !retryOn.has(kind)) throw fail(error);
      }
    }
    throw fail(lastError);
  }

  return { id: entry.id, entry, provider: first.provider, route, targets: usable, generate };
}

const elapsed = (started: number) => Math.round(performance.now() - started);

const errorOf = (e: ProviderError) => ({ code: e.kind, message: e.message });

function unusable(error: unknown): { code: string; message: string } {
  return { code: "model_unavailable", message: error instanceof Error ? error.message : String(error) };
}

function attemptTimedOut(target: ResolvedModel, route: RouteDefinition, cause: unknown): ProviderError {
  return new ProviderError(
    "provider_timeout",
    `${target.id} did not answer within route "${route.name}"'s attemptTimeoutMs (${route.attemptTimeoutMs} ms)`,
    { provider: target.entry.provider, model: target.entry.model, cause },
  );
}

function minDefined(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.min(a, b);
}

function combined(a: AbortSignal | undefined, b: AbortSignal | undefined): AbortSignal | undefined {
  if (!a) return b;
  if (!b) return a;
  return AbortSignal.any([a, b]);
}
