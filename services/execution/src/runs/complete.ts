/**
 * Complete (non-public): one model call outside any prompt, for the evaluation service's
 * llm_judge assertions. It is stored as a run of kind "judge" (`jrun_…`, GET /api/judge-runs/:id)
 * with its run.completed event, like every run, so a judge's tokens and cost are on record; a
 * provider failure is stored as a failed judge run and answered as provider_error /
 * provider_timeout (502 / 504).
 */
import { performance } from "node:perf_hooks";
import type { IdentityAuth } from "@kiln/kit/authorizer";
import { DomainError, invalidArgument } from "@kiln/kit/errors";
import { newId } from "@kiln/kit/ids";
import { type JsonText, readJsonText } from "@kiln/kit/json-text";
import type { CostNote } from "@kiln/models/catalog";
import {
  type ChatMessage,
  isProviderError,
  providerFailureOf,
  type ResponseFormat,
  type TokenUsage,
} from "@kiln/models/provider";
import type { ProviderRegistry } from "@kiln/models/registry";
import { apiKeyLimitOf, limitList, modelLimitOf } from "../limits/token-limits.js";
import { type RouteResolver, routedRegistry } from "../model-routes/routed-registry.js";
import { apiKeyIdOf, type CallContext, evaluationRunIdOf } from "./call-context.js";
import { modelCalls } from "./model-calls.js";
import { costNotesField, failedBeforeAnswer, type PromptExecution } from "./prompt-execution.js";
import { runDocOf } from "./run-record.js";
import { type RunStoreDeps, storeRun } from "./store-run.js";

export interface CompleteInput {
  organizationId: string;
  /** "" for the deployment's default model. */
  model: string;
  system: string;
  user: string;
  /** JSON Schema of the answer; unset for text. */
  responseSchema?: JsonText;
  /** The evaluation run the judge grades for ("" or absent: none), stored on the judge run. */
  evaluationRunId?: string;
}

export interface Completion {
  text: string;
  /** The parsed answer when a schema was asked for and the answer is JSON. */
  json?: unknown;
  provider: string;
  /** "<provider>/<model>". */
  model: string;
  usage: TokenUsage;
  /** null when the model has no price. */
  estimatedCostUsd: number | null;
  /** What the estimate assumed (costNotesOf); empty when nothing. */
  costNotes: CostNote[];
  latencyMs: number;
  /** The stored judge run. */
  runId: string;
}

export type Completer = (input: CompleteInput, ctx: CallContext) => Promise<Completion>;

function responseFormatOf(text: JsonText | undefined): ResponseFormat {
  if (text === undefined) return { type: "text" };
  const read = readJsonText(text);
  if (!read.ok) {
    throw invalidArgument(`responseSchema ${read.issue}`, [{ field: "responseSchema", issue: read.issue }]);
  }
  const schema = read.value;
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) {
    throw invalidArgument("responseSchema must be a JSON Schema object", [
      { field: "responseSchema", issue: "must be a JSON Schema object" },
    ]);
  }
  return { type: "json_schema", name: "response", schema: schema as Record<string, unknown> };
}

export function createCompleter(
  deps: RunStoreDeps & {
    identityAuth: IdentityAuth;
    models: ProviderRegistry;
    /** Lets a judge's model be one of the organization's routes, "route/<name>" (docs/providers.md "Routes"). */
    routes?: RouteResolver;
    now?: () => Date;
  },
): Completer {
  const now = deps.now ?? (() => new Date());
  return async (input, ctx) => {
    if (input.organizationId === "") {
      throw invalidArgument("organizationId is required", [{ field: "organizationId", issue: "is required" }]);
    }
    // A service principal (the evaluation service) passes in the organization it acts for; an API key needs runs:write.
    await deps.identityAuth.authorize(
      ctx.principal,
      { organizationId: input.organizationId, requireAi: true, scope: "runs:write" },
      ctx.requestId,
    );
    if (input.user.trim() === "") throw invalidArgument("user is required", [{ field: "user", issue: "is required" }]);
    const responseFormat = responseFormatOf(input.responseSchema);
    const models = await routedRegistry(deps.models, deps.routes, input.organizationId, [input.model]);
    const model = await models.resolve(input.model || undefined, { organizationId: input.organizationId });
    const messages: ChatMessage[] = [
      ...(input.system ? [{ role: "system" as const, content: input.system }] : []),
      { role: "user", content: input.user },
    ];
    const evaluationRunId = evaluationRunIdOf(input, ctx);
    const started = performance.now();
    const createdAt = now();
    const id = newId("jrun");
    let failure: unknown;
    const run = await storeRun(
      deps,
      {
        id,
        organizationId: input.organizationId,
        apiKeyId: apiKeyIdOf(ctx.principal),
        tokenLimits: limitList(apiKeyLimitOf(ctx.principal), modelLimitOf(model)),
      },
      async () => {
        let execution: PromptExecution;
        // A route's judge call is recorded as the target that answered, at its price (model-calls.ts).
        const calls = modelCalls(model);
        try {
          const answer = await model.generate({ messages, responseFormat, signal: ctx.signal });
          calls.answered(answer);
          const routed = calls.record();
          execution = {
            status: "succeeded",
            output: { text: answer.text, ...(answer.json !== undefined ? { json: answer.json } : {}) },
            provider: calls.entry().provider,
            model: calls.entry().id,
            usage: answer.usage,
            estimatedCostUsd: calls.costUsd(),
            ...costNotesField(calls.costNotes()),
            latencyMs: Math.round(performance.now() - started),
            toolCalls: [],
            ...(routed ? { routed } : {}),
          };
        } catch (e) {
          // ProviderError is a DomainError of kind provider_error / provider_timeout: it goes out as
          // is, after the failed run is stored.
          failure = e;
          calls.failed(e);
          const error = isProviderError(e)
            ? providerFailureOf(e)
            : e instanceof DomainError
              ? { code: e.kind, message: e.message }
              : { code: "internal", message: "the judge failed" };
          const routed = calls.record();
          execution = {
            ...failedBeforeAnswer(model, error, Math.round(performance.now() - started)),
            provider: calls.entry().provider,
            model: calls.entry().id,
            ...(routed ? { routed } : {}),
          };
        }
        return runDocOf({
          id,
          kind: "judge",
          organizationId: input.organizationId,
          evaluationRunId,
          input: { system: input.system, user: input.user },
          createdAt,
          steps: [],
          single: execution,
          completedAt: now(),
        });
      },
      ctx.trace,
    );
    if (failure !== undefined) throw failure;
    const output =
      run.outputJson === null ? { text: "" } : (JSON.parse(run.outputJson) as { text: string; json?: unknown });
    return {
      text: output.text,
      ...(output.json !== undefined ? { json: output.json } : {}),
      provider: run.provider ?? model.entry.provider,
      model: run.model ?? model.entry.id,
      usage: run.usage,
      estimatedCostUsd: run.estimatedCostUsd,
      costNotes: run.costNotes ?? [],
      latencyMs: run.latencyMs,
      runId: id,
    };
  };
}
