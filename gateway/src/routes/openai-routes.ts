/**
 * The OpenAI-compatible endpoint (docs/openai-compatible.md): `POST /v1/chat/completions` runs a
 * Kiln prompt or skill through the execution service's normal run path (a stored run like any
 * other) and answers in the Chat Completions shape; `GET /v1/models` and `GET /v1/models/:id` list
 * and describe what can be called. The request becomes a run request in openai-chat-request.ts,
 * the run an answer in openai-chat-answer.ts, or with `stream: true` a stream of chunks as the
 * model answers (openai-chat-stream.ts over openai-run-stream.ts). Errors leave in OpenAI's error shape
 * (`openAiErrorOf`). Outside /api, not in the OpenAPI document.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import type { Run } from "@kiln/proto/execution";
import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { rpcOptions } from "../http/request.js";
import { openAiCatalog } from "./openai-catalog.js";
import { COST_HEADER, chatAnswerOf, completionOf, failedRunError } from "./openai-chat-answer.js";
import { type ChatRequest, chatRequestOf, openAiParamOf, PROMPT_ONLY_FIELDS } from "./openai-chat-request.js";
import { sendLiveRun, sendWholeRun } from "./openai-chat-stream.js";
import { badRequest, modelNotFound, OpenAiHttpError, openAiErrorOf } from "./openai-errors.js";
import { DEFAULT_LABEL, parseModel } from "./openai-model-ref.js";
import { promptRunStream } from "./openai-run-stream.js";

/** A 400 from the run request, its `param` renamed to the OpenAI request's field. */
function withOpenAiParam(error: unknown, request: ChatRequest, requestId: string): unknown {
  const { status, body } = openAiErrorOf(error, requestId);
  if (status !== 400 || body.error.param === null) return error;
  const param = openAiParamOf(body.error.param, request);
  return new OpenAiHttpError(400, { error: { ...body.error, param } });
}

/** POST /v1/chat/completions, GET /v1/models and GET /v1/models/:id. */
export function registerOpenAiRoutes(app: GatewayApp, deps: GatewayDeps): void {
  const { execution } = deps.clients;
  const lookup = openAiCatalog(deps);

  app.get("/v1/models", { schema: { hide: true } }, async (request) => {
    const organizationId = lookup.organizationOfCaller(request);
    return { object: "list", data: await lookup.listModels(request, organizationId) };
  });

  // The OpenAI SDKs send the id URL-encoded (kiln%2F…); a plain kiln/… path is read the same.
  app.get("/v1/models/*", { schema: { hide: true } }, async (request) => {
    const model = (request.params as { "*": string })["*"];
    const organizationId = lookup.organizationOfCaller(request);
    const parsed = parseModel(model);
    if (!parsed)
      throw modelNotFound(model, "is not a Kiln model (kiln/<prompt>[@label] or kiln/skill/<skill>[@label])");
    const item = await lookup.find(request, organizationId, parsed);
    if (!item) throw modelNotFound(model);
    if (parsed.label === DEFAULT_LABEL) {
      if (!item.publishedVersionId) throw modelNotFound(model);
    } else if (!(await lookup.labelsOf(request, parsed.kind, item.id)).includes(parsed.label)) {
      throw modelNotFound(model, `has no label "${parsed.label}"`);
    }
    return { ...lookup.modelOf(parsed.kind, item, organizationId, parsed.label), id: model };
  });

  app.post("/v1/chat/completions", { schema: { hide: true } }, async (request, reply) => {
    const chat = chatRequestOf(request.body);
    const { model } = chat;
    const parsed = parseModel(model);
    if (!parsed)
      throw modelNotFound(model, "is not a Kiln model (kiln/<prompt>[@label] or kiln/skill/<skill>[@label])");
    // Without @label: the published version, as a run without a label. With one: that label's
    // version; a label the prompt or skill does not have is an unknown model.
    const label = parsed.label === DEFAULT_LABEL ? "" : parsed.label;
    const refusal = (e: unknown) =>
      label !== "" && e instanceof ConnectError && e.code === Code.NotFound && e.rawMessage.startsWith("label ")
        ? modelNotFound(model, `has no label "${label}"`)
        : withOpenAiParam(e, chat, request.id);
    const run = async (call: () => Promise<{ run?: Run }>): Promise<Run> => {
      try {
        const answer = (await call()).run;
        if (!answer) throw new Error("execution returned no run");
        return answer;
      } catch (e) {
        throw refusal(e);
      }
    };

    const organizationId = lookup.organizationOfCaller(request);
    const item = await lookup.find(request, organizationId, parsed);
    if (!item || (label === "" && !item.publishedVersionId)) throw modelNotFound(model);
    let done: Run;
    // A prompt streams as it runs; an idempotent request (Idempotency-Key) runs whole, so that its
    // replay answers the same; a skill run is whole (its steps do not stream).
    if (chat.stream && parsed.kind === "prompt" && request.headers["idempotency-key"] === undefined) {
      const abort = new AbortController();
      const options = { ...rpcOptions(request), signal: abort.signal };
      const runRequest = { organizationId, promptId: item.id, label, ...chat.run };
      return sendLiveRun(request, reply, {
        events: promptRunStream(execution, runRequest, options)[Symbol.asyncIterator](),
        model,
        includeUsage: chat.includeUsage,
        abort,
        refused: (e) => refusal(e),
      });
    }
    if (parsed.kind === "prompt") {
      done = await run(() =>
        execution.runPrompt({ organizationId, promptId: item.id, label, ...chat.run }, rpcOptions(request)),
      );
    } else {
      if ((chat.run.messages ?? []).length > 0) {
        throw badRequest("a skill takes its input in `variables` only: send `messages: []`", "messages");
      }
      const body = request.body as Record<string, unknown>;
      const sent = (v: unknown) => v !== undefined && v !== null && !(Array.isArray(v) && v.length === 0);
      const field = PROMPT_ONLY_FIELDS.find((f) => sent(body[f]));
      if (field) throw badRequest(`a skill runs with its prompts' own settings: \`${field}\` is for prompts`, field);
      done = await run(() =>
        execution.runSkill({ organizationId, skillId: item.id, input: chat.run.variables, label }, rpcOptions(request)),
      );
    }
    reply.header("x-kiln-run-id", done.id);
    if (done.status !== "succeeded" || done.output === undefined) throw failedRunError(done);
    const answer = chatAnswerOf(done);
    if (answer.usage.cost_usd !== null) reply.header(COST_HEADER, String(answer.usage.cost_usd));

    if (chat.stream) return sendWholeRun(request, reply, done, model, chat.includeUsage);
    return completionOf(done, model, answer);
  });
}
