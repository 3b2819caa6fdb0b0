/**
 * `POST /v1/messages` (docs/anthropic-compatible.md): Anthropic's Messages API over the same run as
 * the OpenAI-compatible routes (`openAiModelRunner`, the same `kiln/…` model names): the request
 * becomes a prompt or skill run in anthropic-messages-request.ts, the stored run a `message` in
 * anthropic-messages-answer.ts or, with `stream: true`, Anthropic's events in
 * anthropic-messages-stream.ts. Errors leave in Anthropic's error shape (anthropic-errors.ts, the
 * app's error handler picks it for this path); outside /api, not in the OpenAPI document.
 */
import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { messageOf } from "./anthropic-messages-answer.js";
import { messagesRequestOf } from "./anthropic-messages-request.js";
import { errorEventOf, writeMessageEvents } from "./anthropic-messages-stream.js";
import { answerCall } from "./openai-call-deltas.js";
import { openAiModelRunner } from "./openai-model-run.js";

export function registerAnthropicMessagesRoute(app: GatewayApp, deps: GatewayDeps): void {
  const runner = openAiModelRunner(deps);

  app.post("/v1/messages", { schema: { hide: true } }, async (request, reply) => {
    // Anthropic's name of the request id (the SDKs' `requestID`), besides Kiln's x-request-id.
    reply.header("request-id", request.id);
    const call = messagesRequestOf(request.body);
    return answerCall(runner, request, reply, {
      call,
      whole: (run) => messageOf(run, call.model),
      events: (started, deltas, send) => writeMessageEvents(started, call.model, request.id, deltas, send),
      errorEvent: (e) => errorEventOf(e, request.id),
    });
  });
}
