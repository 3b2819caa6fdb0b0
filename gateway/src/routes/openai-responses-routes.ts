/**
 * `POST /v1/responses` (docs/openai-compatible.md "Responses API"): OpenAI's Responses API over
 * the same run as Chat Completions (`openAiModelRunner`): the request becomes a prompt or skill run
 * in openai-responses-request.ts, the stored run a `response` object in openai-responses-answer.ts
 * or, with `stream: true`, the Responses events in openai-responses-stream.ts. Errors leave in
 * OpenAI's error shape; outside /api, not in the OpenAPI document (as Chat Completions).
 */

import { Code, ConnectError } from "@connectrpc/connect";
import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { rpcOptions } from "../http/request.js";
import { answerCall } from "./openai-call-deltas.js";
import { openAiErrorOf } from "./openai-errors.js";
import { openAiModelRunner } from "./openai-model-run.js";
import { responseOf } from "./openai-responses-answer.js";
import { withReferencesResolved } from "./openai-responses-references.js";
import { responsesRequestOf } from "./openai-responses-request.js";
import { writeResponseEvents } from "./openai-responses-stream.js";

export function registerOpenAiResponsesRoute(app: GatewayApp, deps: GatewayDeps): void {
  const runner = openAiModelRunner(deps);
  const { execution } = deps.clients;

  app.post("/v1/responses", { schema: { hide: true } }, async (request, reply) => {
    const readRun = async (id: string) => {
      try {
        return (await execution.getRun({ id, kind: "" }, rpcOptions(request))).run;
      } catch (e) {
        if (e instanceof ConnectError && e.code === Code.NotFound) return undefined;
        throw e;
      }
    };
    const call = responsesRequestOf(await withReferencesResolved(request.body, readRun));
    return answerCall(runner, request, reply, {
      call,
      whole: (run) => responseOf(run, call.model),
      events: (started, deltas, send) => writeResponseEvents(started, call.model, deltas, send),
      errorEvent: (e) => {
        const { error } = openAiErrorOf(e, request.id).body;
        const event = { type: "error", code: error.code, message: error.message, param: error.param };
        return `event: error\ndata: ${JSON.stringify(event)}\n\n`;
      },
    });
  });
}
