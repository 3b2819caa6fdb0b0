/**
 * The OpenAI-compatible endpoint (docs/openai-compatible.md): `POST /v1/chat/completions` runs a
 * Kiln prompt or skill, or a model directly (a model run), through the execution service's normal
 * run path (a stored run like any other) and answers in the Chat Completions shape; `GET /v1/models` and `GET /v1/models/:id` list
 * and describe what can be called. The request becomes a run request in openai-chat-request.ts,
 * the run an answer in openai-chat-answer.ts, or with `stream: true` a stream of chunks as the
 * model answers (openai-chat-stream.ts over openai-run-stream.ts). Errors leave in OpenAI's error shape
 * (`openAiErrorOf`). Outside /api, not in the OpenAPI document.
 */
import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { openAiCatalog } from "./openai-catalog.js";
import { chatAnswerOf, completionOf } from "./openai-chat-answer.js";
import { chatRequestOf, openAiParamOf, PROMPT_ONLY_FIELDS } from "./openai-chat-request.js";
import { sendLiveRun, sendWholeRun } from "./openai-chat-stream.js";
import { modelNotFound } from "./openai-errors.js";
import { DEFAULT_LABEL, parseModel } from "./openai-model-ref.js";
import { openAiModelRunner, replyWithRun } from "./openai-model-run.js";

/** POST /v1/chat/completions, GET /v1/models and GET /v1/models/:id. */
export function registerOpenAiRoutes(app: GatewayApp, deps: GatewayDeps): void {
  const lookup = openAiCatalog(deps);
  const runner = openAiModelRunner(deps);

  app.get("/v1/models", { schema: { hide: true } }, async (request) => {
    const organizationId = lookup.organizationOfCaller(request);
    const data = await lookup.listModels(request, organizationId);
    // OpenAI's list, with Anthropic's page fields (one page) for its SDKs' models.list.
    return { object: "list", data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
  });

  // The OpenAI SDKs send the id URL-encoded (kiln%2F…); a plain kiln/… path is read the same.
  app.get("/v1/models/*", { schema: { hide: true } }, async (request) => {
    const model = (request.params as { "*": string })["*"];
    const organizationId = lookup.organizationOfCaller(request);
    const parsed = parseModel(model);
    if (!parsed) {
      // A model called directly: one of the deployment's or the organization's connections'.
      const direct = model.startsWith("kiln/") ? undefined : await lookup.directModels(request, organizationId);
      const found = direct?.find((m) => m.id === model);
      if (found) return found;
      throw modelNotFound(model, "is neither a Kiln prompt or skill (kiln/…) nor a model you can call");
    }
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
    const body = request.body as Record<string, unknown>;
    const sent = (v: unknown) => v !== undefined && v !== null && !(Array.isArray(v) && v.length === 0);
    const call = {
      model: chat.model,
      run: chat.run,
      messagesField: "messages",
      promptOnlyField: PROMPT_ONLY_FIELDS.find((f) => sent(body[f])),
      paramOf: (field: string) => openAiParamOf(field, chat),
    };
    const target = await runner.target(request, call);
    if (chat.stream) {
      // A prompt streams as its model answers; what runs whole leaves as chunks once it is done.
      const abort = new AbortController();
      const events = runner.stream(request, call, target, abort.signal);
      if (events) {
        const live = { events, model: chat.model, includeUsage: chat.includeUsage, abort, refused: target.refusal };
        return sendLiveRun(request, reply, live);
      }
    }
    const done = await runner.run(request, call, target);
    replyWithRun(reply, done);
    const answer = chatAnswerOf(done);

    if (chat.stream) return sendWholeRun(request, reply, done, chat.model, chat.includeUsage);
    return completionOf(done, chat.model, answer);
  });
}
