/**
 * A prompt run and a skill run from resolved versions to the stored record: execute, build the
 * record, store and publish. Prompt and skill runs use them, and so do an agent's prompt and
 * skill steps (each stores a child run).
 */
import { newId } from "@kiln/kit/ids";
import type { ChatMessage, ModelDelta } from "@kiln/models/provider";
import type { ResolvedModel } from "@kiln/models/registry";
import type { CachePolicy } from "../cache/cache-policy.js";
import type { ResponseCache } from "../cache/response-cache.js";
import { openRunCache } from "../cache/run-cache.js";
import { limitList, modelLimitOf, type TokenLimit } from "../limits/token-limits.js";
import type { RunDoc } from "../store/run-store.js";
import type { RunTraceContext } from "../traces/run-trace-context.js";
import type { CallerOptions } from "./caller-options.js";
import { executePrompt } from "./prompt-execution.js";
import { runDocOf } from "./run-record.js";
import type { RunnablePrompt, SkillStep } from "./runnable.js";
import { type ExecutionDeps, executeSkillSteps } from "./skill-steps.js";
import { type RunStoreDeps, storeRun } from "./store-run.js";

export interface StoredRunDeps extends ExecutionDeps, RunStoreDeps {
  now: () => Date;
  /** Prompt runs whose request asks for it answer from here (docs/cache.md); none: never cached. */
  responseCache?: ResponseCache;
}

export interface PromptRunInput {
  organizationId: string;
  /** The API key that started the run, when one did. */
  apiKeyId?: string;
  /** That key's token-per-minute limit, when it has one (limits/token-limits.ts). */
  apiKeyLimit?: TokenLimit;
  /** The call's idempotency key, when it came with an Idempotency-Key (store-run.ts). */
  idempotencyKey?: string;
  prompt: RunnablePrompt;
  model: ResolvedModel;
  variables: Record<string, unknown>;
  /** The caller's messages after the version's own; none for agent steps. */
  extraMessages?: ChatMessage[];
  /** The caller's tools, tool choice and sampling; none for agent steps. */
  caller?: CallerOptions;
  signal?: AbortSignal;
  /**
   * A streaming run: told the run's id (and the cache's answer, when the run uses it) before the
   * model is called, then handed its deltas.
   */
  stream?: { onStart(runId: string, cacheStatus?: "hit" | "miss"): void; onDelta(delta: ModelDelta): void };
  trace?: RunTraceContext;
  /** The label the version was resolved through, when the request named one. */
  label?: string;
  /** The run's TTL (its Kiln-Cache header, else its label's or version's default); none for agent steps. */
  cache?: CachePolicy;
  /** The evaluation run it is made for (a prompt evaluation's item). */
  evaluationRunId?: string;
}

/** Runs a prompt version and stores the run (a failed execution is stored as a failed run). */
export async function storePromptRun(deps: StoredRunDeps, r: PromptRunInput): Promise<RunDoc> {
  const createdAt = deps.now();
  // A run without a prompt is a model run (model-run.ts).
  const kind = r.prompt.promptId === "" ? "model" : "prompt";
  const id = newId(kind === "model" ? "mrun" : "run");
  const cache = await openRunCache(deps.responseCache, r);
  const extraMessages = r.extraMessages ?? [];
  return storeRun(
    deps,
    {
      id,
      organizationId: r.organizationId,
      apiKeyId: r.apiKeyId,
      idempotencyKey: r.idempotencyKey,
      promptId: r.prompt.promptId,
      connectionId: r.model.entry.connectionId,
      tokenLimits: limitList(r.apiKeyLimit, modelLimitOf(r.model)),
    },
    async () => {
      // Once admitted (store-run.ts): a stream refused by the plan's limit has not started.
      r.stream?.onStart(id, cache.record?.status);
      return runDocOf({
        id,
        kind,
        organizationId: r.organizationId,
        input: {
          ...inputOf(kind, r.variables, extraMessages, r.caller),
          ...(kind === "prompt" && r.prompt.promptVersionId === "" && { draft: draftOf(r.prompt) }),
        },
        createdAt,
        promptId: r.prompt.promptId,
        promptVersionId: r.prompt.promptVersionId,
        label: r.label,
        evaluationRunId: r.evaluationRunId,
        steps: [],
        single: await cache.execute(
          id,
          () =>
            executePrompt(r.prompt, r.variables, {
              model: r.model,
              tools: deps.tools,
              maxToolRounds: deps.maxToolRounds,
              signal: r.signal,
              ...(r.extraMessages ? { extraMessages: r.extraMessages } : {}),
              ...(r.caller ? { caller: r.caller } : {}),
              ...(r.stream ? { onDelta: r.stream.onDelta } : {}),
            }),
          r.stream?.onDelta,
        ),
        cache: cache.record,
        completedAt: deps.now(),
      });
    },
    r.trace,
  );
}

/** A prompt run's recorded input: the variables (a model run has none), and what the caller sent besides when it did. */
function inputOf(
  kind: "prompt" | "model",
  variables: Record<string, unknown>,
  messages: ChatMessage[],
  caller: CallerOptions | undefined,
): Record<string, unknown> {
  const input: Record<string, unknown> = kind === "prompt" ? { variables } : {};
  if (messages.length > 0) input.messages = messages;
  if (caller && caller.tools.length > 0) input.tools = caller.tools;
  if (caller?.toolChoice !== undefined) input.toolChoice = caller.toolChoice;
  if (caller?.responseFormat !== undefined) input.responseFormat = caller.responseFormat;
  if (caller && Object.keys(caller.sampling).length > 0) input.parameters = caller.sampling;
  return input;
}

/** What an unsaved version (a draft) ran with, kept on its run: the run names no version to read it from. */
function draftOf(p: RunnablePrompt): Record<string, unknown> {
  return {
    ...(p.messages && p.messages.length > 0 && p.systemPrompt === ""
      ? { messages: p.messages }
      : { systemPrompt: p.systemPrompt, ...(p.developerPrompt !== null && { developerPrompt: p.developerPrompt }) }),
    variablesSchema: p.variablesSchema,
    responseFormat: p.responseFormat,
    ...(p.temperature !== null && { temperature: p.temperature }),
    ...(p.maxOutputTokens !== null && { maxOutputTokens: p.maxOutputTokens }),
    model: p.model,
    tools: p.tools.map((t) => ({ toolKey: t.toolKey, toolVersionId: t.toolVersionId })),
  };
}

export interface SkillRunInput {
  organizationId: string;
  /** The API key that started the run, when one did. */
  apiKeyId?: string;
  /** That key's token-per-minute limit, when it has one (limits/token-limits.ts). */
  apiKeyLimit?: TokenLimit;
  /** The limits of the models its steps run on (the caller resolved them). */
  modelLimits?: TokenLimit[];
  /** The call's idempotency key, when it came with an Idempotency-Key (store-run.ts). */
  idempotencyKey?: string;
  skillId: string;
  skillVersionId: string;
  steps: SkillStep[];
  input: Record<string, unknown>;
  evaluationRunId?: string;
  signal?: AbortSignal;
  trace?: RunTraceContext;
  /** The label the version was resolved through, when the request named one. */
  label?: string;
}

/** Runs a skill version's steps and stores the run. */
export function storeSkillRun(deps: StoredRunDeps, r: SkillRunInput): Promise<RunDoc> {
  const createdAt = deps.now();
  const id = newId("srun");
  return storeRun(
    deps,
    {
      id,
      organizationId: r.organizationId,
      apiKeyId: r.apiKeyId,
      idempotencyKey: r.idempotencyKey,
      tokenLimits: limitList(r.apiKeyLimit, ...(r.modelLimits ?? [])),
    },
    async () =>
      runDocOf({
        id,
        kind: "skill",
        organizationId: r.organizationId,
        input: { input: r.input },
        createdAt,
        skillId: r.skillId,
        skillVersionId: r.skillVersionId,
        label: r.label,
        evaluationRunId: r.evaluationRunId,
        steps: await executeSkillSteps(deps, r.steps, r.input, r.signal),
        completedAt: deps.now(),
      }),
    r.trace,
  );
}
