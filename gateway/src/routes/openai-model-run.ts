/**
 * The run behind every OpenAI-shaped route (Chat Completions, Responses, Anthropic Messages): a
 * `kiln/…` model name as a prompt or skill at a label, any other name as a model run directly
 * (the caller's messages to a model of the deployment or of the organization's connections, or a
 * route; docs/openai-compatible.md "Models"), run through the execution service's normal run path, its errors in OpenAI's shape with the caller's field names, and the
 * run's headers on the answer (`x-kiln-run-id`, the cost), a failed run as its OpenAI error.
 */
import type { OutgoingHttpHeaders, ServerResponse } from "node:http";
import { Code, ConnectError } from "@connectrpc/connect";
import type { Run } from "@kiln/proto/execution";
import type { FastifyReply, FastifyRequest } from "fastify";
import { cacheDirectiveOf, replyRunCacheStatus } from "../http/cache-header.js";
import type { GatewayDeps } from "../http/gateway-app.js";
import { rpcOptions } from "../http/request.js";
import { securityHeadersOf } from "../security-headers.js";
import { openAiCatalog } from "./openai-catalog.js";
import { COST_HEADER, failedRunError } from "./openai-chat-answer.js";
import { badRequest, modelNotFound, OpenAiHttpError, openAiErrorOf } from "./openai-errors.js";
import { DEFAULT_LABEL, parseModel } from "./openai-model-ref.js";
import type { KilnRunFields } from "./openai-request-fields.js";
import { promptRunStream, type RunStreamEvent } from "./openai-run-stream.js";

export interface ModelRunCall {
  model: string;
  /** The prompt run's fields; a skill takes `variables` only (as its input). */
  run: KilnRunFields;
  /** The request's field carrying the caller's messages (`messages`, `input`): a skill takes none. */
  messagesField: string;
  /** A field the request sent that only a prompt run honours (a 400 for a skill). */
  promptOnlyField: string | undefined;
  /** The request's name of a run-request field (`parameters.topP` is `top_p`), for a 400's param. */
  paramOf: (field: string) => string;
}

/** A 400 from the run request, its `param` renamed to the OpenAI request's field. */
function withOpenAiParam(error: unknown, paramOf: (field: string) => string, requestId: string): unknown {
  const { status, body } = openAiErrorOf(error, requestId);
  if (status !== 400 || body.error.param === null) return error;
  return new OpenAiHttpError(400, { error: { ...body.error, param: paramOf(body.error.param) } });
}

/** Where a model runs for the caller: the prompt or skill and its label, or a model run; how its refusals read. */
export interface ModelTarget {
  kind: "prompt" | "skill" | "model";
  organizationId: string;
  /** The prompt's or skill's id; "" for a model run. */
  id: string;
  /** "" for the published version. */
  label: string;
  /** A ConnectError of the run as the caller reads it (an unknown label is an unknown model). */
  refusal: (error: unknown) => unknown;
}

/** Runs `call.model` for the caller: the stored run, succeeded or failed; OpenAI errors otherwise. */
export function openAiModelRunner(deps: GatewayDeps) {
  const { execution } = deps.clients;
  const lookup = openAiCatalog(deps);

  /** A model called without a prompt: an unknown one reads as OpenAI's unknown model. */
  function directTarget(request: FastifyRequest, call: ModelRunCall): ModelTarget {
    const refusal = (e: unknown) => {
      if (e instanceof ConnectError && e.code === Code.InvalidArgument) {
        const { body } = openAiErrorOf(e, request.id);
        if (body.error.param === "model")
          return modelNotFound(call.model, `is not a model you can call: ${e.rawMessage}`);
      }
      return withOpenAiParam(e, call.paramOf, request.id);
    };
    return { kind: "model", organizationId: lookup.organizationOfCaller(request), id: "", label: "", refusal };
  }

  /** The prompt or skill `call.model` names, checked for what a skill cannot take; any other name a model run. */
  async function target(request: FastifyRequest, call: ModelRunCall): Promise<ModelTarget> {
    const { model } = call;
    const parsed = parseModel(model);
    if (!parsed) {
      if (model.startsWith("kiln/")) {
        throw modelNotFound(model, "is not a Kiln model (kiln/<prompt>[@label] or kiln/skill/<skill>[@label])");
      }
      return directTarget(request, call);
    }
    // Without @label: the published version, as a run without a label. With one: that label's
    // version; a label the prompt or skill does not have is an unknown model.
    const label = parsed.label === DEFAULT_LABEL ? "" : parsed.label;
    const refusal = (e: unknown) =>
      label !== "" && e instanceof ConnectError && e.code === Code.NotFound && e.rawMessage.startsWith("label ")
        ? modelNotFound(model, `has no label "${label}"`)
        : withOpenAiParam(e, call.paramOf, request.id);
    const organizationId = lookup.organizationOfCaller(request);
    const item = await lookup.find(request, organizationId, parsed);
    if (!item || (label === "" && !item.publishedVersionId)) throw modelNotFound(model);
    if (parsed.kind === "skill") {
      if ((call.run.messages ?? []).length > 0) {
        throw badRequest(
          `a skill takes its input in \`variables\` only: send no \`${call.messagesField}\``,
          call.messagesField,
        );
      }
      if (call.promptOnlyField) {
        const field = call.promptOnlyField;
        throw badRequest(`a skill runs with its prompts' own settings: \`${field}\` is for prompts`, field);
      }
    }
    return { kind: parsed.kind, organizationId, id: item.id, label, refusal };
  }

  /** The target's run, whole. */
  async function run(request: FastifyRequest, call: ModelRunCall, to?: ModelTarget): Promise<Run> {
    const t = to ?? (await target(request, call));
    const { organizationId, label } = t;
    const cache = cacheDirectiveOf(request);
    try {
      const answer = (
        t.kind !== "skill"
          ? await execution.runPrompt(
              { organizationId, promptId: t.id, label, ...call.run, ...modelOf(t, call), cache },
              rpcOptions(request),
            )
          : await execution.runSkill(
              { organizationId, skillId: t.id, input: call.run.variables, label },
              rpcOptions(request),
            )
      ).run;
      if (!answer) throw new Error("execution returned no run");
      return answer;
    } catch (e) {
      throw t.refusal(e);
    }
  }

  /**
   * The target's run as it streams (openai-run-stream.ts), cancelled when `signal` aborts; undefined
   * when it runs whole: a skill (its steps do not stream), or an idempotent request (an
   * Idempotency-Key), so that its replay answers the same.
   */
  function stream(
    request: FastifyRequest,
    call: ModelRunCall,
    t: ModelTarget,
    signal: AbortSignal,
  ): AsyncIterator<RunStreamEvent> | undefined {
    if (t.kind === "skill" || request.headers["idempotency-key"] !== undefined) return undefined;
    const runRequest = {
      organizationId: t.organizationId,
      promptId: t.id,
      label: t.label,
      ...call.run,
      ...modelOf(t, call),
      cache: cacheDirectiveOf(request),
    };
    return promptRunStream(execution, runRequest, { ...rpcOptions(request), signal })[Symbol.asyncIterator]();
  }

  return { target, run, stream };
}

/** A model run names its model; a prompt's run takes the prompt's own. */
const modelOf = (t: ModelTarget, call: ModelRunCall) => (t.kind === "model" ? { model: call.model } : {});

/**
 * The run's headers on the answer (its id, its cost when known, Kiln-Cache-Status when it used the
 * cache); a failed run is thrown as its OpenAI error.
 */
export function replyWithRun(reply: FastifyReply, run: Run): void {
  reply.header("x-kiln-run-id", run.id);
  replyRunCacheStatus(reply, run);
  if (run.status !== "succeeded" || run.output === undefined) throw failedRunError(run);
  if (run.estimatedCostUsd !== undefined) reply.header(COST_HEADER, String(run.estimatedCostUsd));
}

/** Takes the answer over as Server-Sent Events, with the headers set so far: the raw response to write to. */
export function openEventStream(request: FastifyRequest, reply: FastifyReply): ServerResponse {
  reply.hijack();
  // Hijacked: the onSend hook never sees this answer, so it carries the headers itself.
  reply.raw.writeHead(200, {
    ...securityHeadersOf("text/event-stream"),
    ...(reply.getHeaders() as OutgoingHttpHeaders),
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
    "x-request-id": request.id,
    // The run's W3C trace context, known from the execution service's headers before the first event.
    ...(request.runTraceparent && { traceparent: request.runTraceparent }),
  });
  reply.raw.flushHeaders();
  return reply.raw;
}
