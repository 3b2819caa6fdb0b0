/**
 * OpenAI, and any endpoint speaking its Chat Completions protocol: one JSON POST per attempt
 * through node:http (http-fetch.ts), the answer parsed as the wire types of the official SDK
 * describe it. A streaming turn (`onDelta`) asks for `stream: true` with the usage chunk and reads
 * the server-sent events as they arrive (openai-stream.ts); an endpoint that answers JSON anyway
 * is read as JSON. The SDK itself is not on the path: building its request and reading its answer
 * cost about half a millisecond of a run's latency and a quarter of a millisecond of CPU per call,
 * for a call that is one POST (measured against this code in the same process, sequentially).
 *
 * A model whose API is "responses" (its configured `api`, or OpenAI's Responses-only models on
 * OpenAI's own endpoints: openai-responses-models.ts) goes to the Responses API instead
 * (openai-responses-provider.ts). Retries, waits and the call's deadline are every remote
 * provider's (remote-call.ts), which follows the OpenAI SDK's policy.
 */
import type { ChatCompletion } from "openai/resources/chat/completions";
import { createHttpFetch } from "./http-fetch.js";
import { chatEndpointOf, OPENAI_BASE_URL } from "./openai-endpoint.js";
import { openAIApiOf } from "./openai-responses-models.js";
import { createResponsesCall } from "./openai-responses-provider.js";
import { safeExcerpt } from "./openai-retry.js";
import { readChatStream } from "./openai-stream.js";
import { type OpenAIProviderOptions, toRequestBody, toResult } from "./openai-wire.js";
import type { ModelProvider } from "./provider.js";
import { callRemote, jsonPost, policyOf } from "./remote-call.js";

export type { OpenAIProviderOptions };
export { OPENAI_BASE_URL, safeExcerpt };

export function createOpenAIProvider(options: OpenAIProviderOptions): ModelProvider {
  const { id } = options;
  const send = options.fetch ?? createHttpFetch();
  // OpenAI's URL and bearer key, or an Azure deployment's URL and api-key header (openai-endpoint.ts).
  const endpoint = chatEndpointOf(options);
  const headers: Record<string, string> = {
    "user-agent": "kiln",
    ...endpoint.authHeaders,
  };

  const responses = createResponsesCall(options, send);
  const apiOf = (model: string) => openAIApiOf(model, options.apis, options.responsesTable ?? true);

  return {
    id,
    generate(request) {
      if (apiOf(request.model) === "responses") return responses(request);
      const { onDelta } = request;
      const body = JSON.stringify(toRequestBody(request, options));
      return callRemote({
        ...policyOf(options),
        request,
        ...jsonPost(send, endpoint.urlFor(request.model), headers, body, onDelta !== undefined),
        async read(answer, fail, retries) {
          const completion =
            answer.stream && onDelta
              ? await readChatStream(answer.stream, onDelta)
              : (JSON.parse(answer.text ?? "") as ChatCompletion);
          return toResult(completion, request, id, retries, fail);
        },
      });
    },
  };
}
