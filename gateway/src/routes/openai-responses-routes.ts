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
import { openAiModelRunner, openEventStream, replyWithRun } from "./openai-model-run.js";
import { responseOf } from "./openai-responses-answer.js";
import { withReferencesResolved } from "./openai-responses-references.js";
import { responsesRequestOf } from "./openai-responses-request.js";
import { deltasOfRun, writeResponseEvents } from "./openai-responses-stream.js";

export function registerOpenAiResponsesRoute(app: GatewayApp, deps: GatewayDeps): void {
  const runModel = openAiModelRunner(deps);
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
    const done = await runModel(request, call);
    replyWithRun(reply, done);
    if (!call.stream) return responseOf(done, call.model);
    // The run completed whole (execution does not stream yet): its deltas come from the stored run.
    const raw = openEventStream(request, reply);
    await writeResponseEvents(done, call.model, deltasOfRun(done), (text) => raw.write(text));
    raw.end();
    return reply;
  });
}
