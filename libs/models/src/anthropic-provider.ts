/**
 * Anthropic's Messages API (POST /v1/messages), natively: one JSON POST per attempt through
 * node:http (http-fetch.ts) with `x-api-key` and `anthropic-version`, the body and the answer
 * typed by the official SDK's wire types (anthropic-wire.ts), a streaming turn (`onDelta`) read
 * from Anthropic's server-sent events (anthropic-stream.ts). The SDK itself is not on the call
 * path, as for OpenAI (openai-provider.ts says what that path costs). Retries (429, 5xx, 529
 * `overloaded_error`, connection failures; `retry-after` honoured), waits, the call's deadline
 * and aborts are every remote provider's (remote-call.ts). An error answer's message is its
 * `error.type` and `error.message`, redacted and cut short.
 */
import type { Message } from "@anthropic-ai/sdk/resources/messages";
import { readMessageStream } from "./anthropic-stream.js";
import { toRequestBody, toResult, UnsendableRequestError } from "./anthropic-wire.js";
import { createHttpFetch } from "./http-fetch.js";
import { providerMessageOf } from "./openai-retry.js";
import { type ModelProvider, ProviderError, type RemoteProviderOptions } from "./provider.js";
import { callRemote, type ErrorAnswer, jsonPost, policyOf } from "./remote-call.js";

export const ANTHROPIC_BASE_URL = "https://api.anthropic.com";
export const ANTHROPIC_VERSION = "2023-06-01";

export interface AnthropicProviderOptions extends RemoteProviderOptions {
  /** The `anthropic-version` header; default 2023-06-01. */
  version?: string;
}

/** `error.type: error.message` of Anthropic's error body (`{type: "error", error: {type, message}}`), else the text. */
export function anthropicErrorMessageOf({ text }: Pick<ErrorAnswer, "text">): string {
  try {
    const error = (JSON.parse(text) as { error?: { type?: unknown; message?: unknown } } | null)?.error;
    if (error && typeof error.type === "string" && typeof error.message === "string") {
      return `${error.type}: ${error.message}`;
    }
  } catch {
    // Not JSON: read as any provider's.
  }
  return providerMessageOf(text);
}

export function createAnthropicProvider(options: AnthropicProviderOptions): ModelProvider {
  const { id } = options;
  // A base URL may be given with or without the /v1 of the API's paths.
  const base = (options.baseUrl ?? ANTHROPIC_BASE_URL).replace(/\/+$/, "").replace(/\/v1$/, "");
  const send = options.fetch ?? createHttpFetch();
  const url = `${base}/v1/messages`;
  const headers: Record<string, string> = {
    "user-agent": "kiln",
    "anthropic-version": options.version ?? ANTHROPIC_VERSION,
    ...(options.apiKey ? { "x-api-key": options.apiKey } : {}),
  };

  return {
    id,
    async generate(request) {
      let body: string;
      try {
        body = JSON.stringify(toRequestBody(request, id));
      } catch (cause) {
        if (!(cause instanceof UnsendableRequestError)) throw cause;
        throw new ProviderError("provider_error", `${id} cannot take ${cause.message}`, {
          provider: id,
          model: request.model,
          cause,
        });
      }
      const { onDelta } = request;
      return callRemote({
        ...policyOf(options),
        request,
        ...jsonPost(send, url, headers, body, onDelta !== undefined),
        async read(answer, fail, retries) {
          const message =
            answer.stream && onDelta
              ? await readMessageStream(answer.stream, onDelta)
              : (JSON.parse(answer.text ?? "") as Message);
          return toResult(message, request, id, retries, fail);
        },
        messageOf: anthropicErrorMessageOf,
      });
    },
  };
}
