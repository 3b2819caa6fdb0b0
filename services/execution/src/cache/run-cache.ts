/**
 * What the response cache does for one prompt run (docs/cache.md): with a TTL (the request's
 * `Kiln-Cache: ttl=<s>`, else its label's or version's default: cache-policy.ts) the run's key is
 * looked up before the run starts; a hit is the cached answer (replayed as deltas when the run
 * streams) with no provider call, cost 0 and the cost it saved; a miss runs the model and keeps a
 * succeeded answer. Without one (`no-store`, or no header and no default) the cache is left alone.
 */
import { performance } from "node:perf_hooks";
import type { ChatMessage, ModelDelta } from "@kiln/models/provider";
import type { ResolvedModel } from "@kiln/models/registry";
import type { CallerOptions } from "../runs/caller-options.js";
import type { PromptExecution } from "../runs/prompt-execution.js";
import { renderMessages } from "../runs/render.js";
import type { RunnablePrompt } from "../runs/runnable.js";
import type { RunCacheDoc } from "../store/run-store.js";
import type { CachePolicy } from "./cache-policy.js";
import { replayAnswer } from "./cache-replay.js";
import type { CachedAnswer, ResponseCache } from "./response-cache.js";
import { responseKeyOf } from "./response-key.js";

export interface RunCacheInput {
  organizationId: string;
  prompt: RunnablePrompt;
  model: ResolvedModel;
  variables: Record<string, unknown>;
  extraMessages?: ChatMessage[];
  caller?: CallerOptions;
  /** The run's TTL and where it came from; none: the run does not use the cache. */
  cache?: CachePolicy;
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

/** Looks the run up when it has a TTL; a cache that fails reads as a miss. */
export async function openRunCache(cache: ResponseCache | undefined, r: RunCacheInput): Promise<RunCache> {
  // A run that cannot render (an unresolved partial) fails without the cache.
  if (!cache || !r.cache || r.prompt.unresolvedPartial) return UNUSED;
  const { ttlSeconds, source: ttlSource } = r.cache;
  const key = keyOf(r);
  const hit = await cache.lookup(r.organizationId, key, ttlSeconds);
  if (hit) {
    return {
      record: { status: "hit", savedCostUsd: hit.costUsd, sourceRunId: hit.sourceRunId, ttlSeconds, ttlSource },
      execute: async (_id, _execute, onDelta) => hitExecution(hit, onDelta),
    };
  }
  return {
    record: { status: "miss", ttlSeconds, ttlSource },
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
