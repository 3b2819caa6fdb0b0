/**
 * One turn on OpenAI's Responses API (`POST {base}/responses`, or Azure's
 * `{base}/openai/v1/responses`), the path openai-provider.ts takes for a model whose API is
 * "responses" (openai-responses-models.ts): one JSON POST per attempt through the provider's
 * fetch, a streaming turn (`onDelta`) read from the Responses event stream
 * (openai-responses-stream.ts), an endpoint that answers JSON anyway read as JSON. Retries, waits,
 * the deadline, aborts and error answers (`{error: {message, type, code}}`) are every remote
 * provider's (remote-call.ts), as on Chat Completions.
 */
import { responsesEndpointOf } from "./openai-endpoint.js";
import { isResponsesOnlyModel } from "./openai-responses-models.js";
import { type ResponsesAnswer, toResponsesResult } from "./openai-responses-result.js";
import { readResponsesStream } from "./openai-responses-stream.js";
import { toResponsesBody } from "./openai-responses-wire.js";
import type { OpenAIProviderOptions } from "./openai-wire.js";
import type { ModelRequest, ModelResult } from "./provider.js";
import { callRemote, jsonPost, policyOf } from "./remote-call.js";

export function createResponsesCall(
  options: OpenAIProviderOptions,
  send: typeof fetch,
): (request: ModelRequest) => Promise<ModelResult> {
  const endpoint = responsesEndpointOf(options);
  const headers: Record<string, string> = { "user-agent": "kiln", ...endpoint.authHeaders };
  const developerRole = options.developerRole ?? true;

  return (request) => {
    const { onDelta } = request;
    const body = toResponsesBody(request, {
      model: endpoint.modelFor(request.model),
      developerRole,
      // OpenAI's Responses-only models all reason, and refuse temperature and top_p.
      sampling: !isResponsesOnlyModel(request.model),
    });
    return callRemote({
      ...policyOf(options),
      request,
      ...jsonPost(send, endpoint.url, headers, JSON.stringify(body), onDelta !== undefined),
      async read(answer, fail, retries) {
        const response =
          answer.stream && onDelta
            ? await readResponsesStream(answer.stream, onDelta)
            : (JSON.parse(answer.text ?? "") as ResponsesAnswer);
        return toResponsesResult(response, request, options.id, retries, fail);
      },
    });
  };
}
