/**
 * The run behind every OpenAI-shaped route (Chat Completions, Responses): a `kiln/…` model name
 * as a prompt or skill at a label (docs/openai-compatible.md "Models"), run through the execution
 * service's normal run path, its errors in OpenAI's shape with the caller's field names, and the
 * run's headers on the answer (`x-kiln-run-id`, the cost), a failed run as its OpenAI error.
 */
import type { OutgoingHttpHeaders, ServerResponse } from "node:http";
import { Code, ConnectError } from "@connectrpc/connect";
import type { Run } from "@kiln/proto/execution";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { GatewayDeps } from "../http/gateway-app.js";
import { rpcOptions } from "../http/request.js";
import { securityHeadersOf } from "../security-headers.js";
import { openAiCatalog } from "./openai-catalog.js";
import { COST_HEADER, failedRunError } from "./openai-chat-answer.js";
import { badRequest, modelNotFound, OpenAiHttpError, openAiErrorOf } from "./openai-errors.js";
import { DEFAULT_LABEL, parseModel } from "./openai-model-ref.js";
import type { KilnRunFields } from "./openai-request-fields.js";

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

/** Runs `call.model` for the caller: the stored run, succeeded or failed; OpenAI errors otherwise. */
export function openAiModelRunner(deps: GatewayDeps) {
  const { execution } = deps.clients;
  const lookup = openAiCatalog(deps);

  return async (request: FastifyRequest, call: ModelRunCall): Promise<Run> => {
    const { model } = call;
    const parsed = parseModel(model);
    if (!parsed)
      throw modelNotFound(model, "is not a Kiln model (kiln/<prompt>[@label] or kiln/skill/<skill>[@label])");
    // Without @label: the published version, as a run without a label. With one: that label's
    // version; a label the prompt or skill does not have is an unknown model.
    const label = parsed.label === DEFAULT_LABEL ? "" : parsed.label;
    const run = async (rpc: () => Promise<{ run?: Run }>): Promise<Run> => {
      try {
        const answer = (await rpc()).run;
        if (!answer) throw new Error("execution returned no run");
        return answer;
      } catch (e) {
        if (label !== "" && e instanceof ConnectError && e.code === Code.NotFound && e.rawMessage.startsWith("label "))
          throw modelNotFound(model, `has no label "${label}"`);
        throw withOpenAiParam(e, call.paramOf, request.id);
      }
    };

    const organizationId = lookup.organizationOfCaller(request);
    const item = await lookup.find(request, organizationId, parsed);
    if (!item || (label === "" && !item.publishedVersionId)) throw modelNotFound(model);
    if (parsed.kind === "prompt") {
      return run(() =>
        execution.runPrompt({ organizationId, promptId: item.id, label, ...call.run }, rpcOptions(request)),
      );
    }
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
    return run(() =>
      execution.runSkill({ organizationId, skillId: item.id, input: call.run.variables, label }, rpcOptions(request)),
    );
  };
}

/** The run's headers on the answer (its id, its cost when known); a failed run is thrown as its OpenAI error. */
export function replyWithRun(reply: FastifyReply, run: Run): void {
  reply.header("x-kiln-run-id", run.id);
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
  });
  return reply.raw;
}
