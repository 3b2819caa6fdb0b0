/**
 * What the response cache does for one prompt run (docs/cache.md): with `Kiln-Cache: ttl=<s>` the
 * run's key is looked up before the run starts; a hit is the cached answer (replayed as deltas
 * when the run streams) with no provider call, cost 0 and the cost it saved; a miss runs the
 * model and keeps a succeeded answer. `no-store`, or no directive, leaves the cache alone.
 */
import { performance } from "node:perf_hooks";
import { invalidArgument } from "@kiln/kit/errors";
import { LIMITS } from "@kiln/kit/limits";
import type { ChatMessage, ModelDelta } from "@kiln/models/provider";
import type { ResolvedModel } from "@kiln/models/registry";
import type { CallerOptions } from "../runs/caller-options.js";
import type { PromptExecution } from "../runs/prompt-execution.js";
import { renderMessages } from "../runs/render.js";
import type { RunnablePrompt } from "../runs/runnable.js";
import type { RunCacheDoc } from "../store/run-store.js";
import { replayAnswer } from "./cache-replay.js";
import type { CachedAnswer, ResponseCache } from "./response-cache.js";
import { responseKeyOf } from "./response-key.js";

/** RunPromptRequest.cache: the request's Kiln-Cache header. */
export interface CacheDirective {
  ttlSeconds: number;
  noStore: boolean;
}

export interface RunCacheInput {
  organizationId: string;
  prompt: RunnablePrompt;
  model: ResolvedModel;
  variables: Record<string, unknown>;
  extraMessages?: ChatMessage[];
  caller?: CallerOptions;
  cache?: CacheDirective;
}

/** One run's use of the cache, looked up (openRunCache) before the run starts. */
export interface RunCache {
  /** Undefined when the run does not use the cache. */
  record: RunCacheDoc | undefined;
  /** The run's execution: the hit replayed, else `execute`'s, whose success is kept for the TTL. */
  execute(
    runId: string,
    execute: () => Promise<PromptExecution>,
    onDelta?: (delta: ModelDelta) => void,
  ): Promise<PromptExecution>;
}

const UNUSED: RunCache = { record: undefined, execute: (_id, execute) => execute() };

/** A 400 for a directive the gateway would not have sent (a client of the RPC itself). */
export function checkCacheDirective(directive: CacheDirective | undefined): void {
  if (!directive) return;
  const { ttlSeconds, noStore } = directive;
  if (
    !Number.isInteger(ttlSeconds) ||
    ttlSeconds < 0 ||
    ttlSeconds > LIMITS.cacheTtlSeconds ||
    (noStore && ttlSeconds > 0)
  ) {
    throw invalidArgument("invalid cache directive", [
      { field: "Kiln-Cache", issue: `must be ttl=<1 to ${LIMITS.cacheTtlSeconds} seconds> or no-store` },
    ]);
  }
}

/** Looks the run up when its directive asks for the cache; a cache that fails reads as a miss. */
export async function openRunCache(cache: ResponseCache | undefined, r: RunCacheInput): Promise<RunCache> {
  const ttlSeconds = r.cache?.noStore ? 0 : (r.cache?.ttlSeconds ?? 0);
  if (!cache || ttlSeconds === 0) return UNUSED;
  const key = keyOf(r);
  const hit = await cache.lookup(r.organizationId, key, ttlSeconds);
  if (hit) {
    return {
      record: { status: "hit", savedCostUsd: hit.costUsd, sourceRunId: hit.sourceRunId },
      execute: async (_id, _execute, onDelta) => hitExecution(hit, onDelta),
    };
  }
  return {
    record: { status: "miss" },
    async execute(runId, execute) {
      const execution = await execute();
      if (execution.status === "succeeded" && execution.output) {
        await cache.keep(r.organizationId, key, answerOf(execution, runId), ttlSeconds);
      }
      return execution;
    },
  };
}

function keyOf(r: RunCacheInput): string {
  const { prompt, caller } = r;
  return responseKeyOf({
    organizationId: r.organizationId,
    promptVersionId: prompt.promptVersionId,
    model: r.model.id,
    ...(r.model.entry.connectionId ? { connectionId: r.model.entry.connectionId } : {}),
    messages: renderMessages(prompt, r.variables, r.extraMessages),
    tools: [
      // The version's tools by version: a new version of a tool may answer otherwise.
      ...prompt.tools.map((t) => ({
        name: t.toolKey,
        toolVersionId: t.toolVersionId,
        description: t.description,
        inputSchema: t.inputSchema,
      })),
      ...(caller?.tools ?? []),
    ],
    ...(caller?.toolChoice !== undefined ? { toolChoice: caller.toolChoice } : {}),
    responseFormat: prompt.responseFormat,
    parameters: { temperature: prompt.temperature, maxOutputTokens: prompt.maxOutputTokens, ...caller?.sampling },
  });
}

function answerOf(execution: PromptExecution, runId: string): CachedAnswer {
  return {
    output: execution.output ?? { text: "" },
    provider: execution.provider,
    model: execution.model,
    usage: execution.usage,
    costUsd: execution.estimatedCostUsd,
    sourceRunId: runId,
  };
}

/** A hit as the run's execution: no tokens spent, nothing paid, no tool run. */
function hitExecution(hit: CachedAnswer, onDelta?: (delta: ModelDelta) => void): PromptExecution {
  const started = performance.now();
  if (onDelta) replayAnswer(hit.output, onDelta);
  return {
    status: "succeeded",
    output: hit.output,
    provider: hit.provider,
    model: hit.model,
    usage: { inputTokens: 0, outputTokens: 0 },
    estimatedCostUsd: 0,
    latencyMs: Math.round(performance.now() - started),
    toolCalls: [],
  };
}
