/**
 * Google Gemini through its REST API (v1beta): `models/{model}:generateContent`, or
 * `:streamGenerateContent?alt=sse` for a streaming turn (`onDelta`), the key in `x-goog-api-key`,
 * one POST per attempt through node:http (http-fetch.ts). The call policy (deadline, retries on
 * 408/409/429/5xx and connection failures, Retry-After or Gemini's RetryInfo honoured) is
 * remote-call.ts's, the same as OpenAI's. The mapping of requests, answers and token counts is in
 * docs/providers.md "Gemini".
 */

import { assignCallIds, type GeminiResponse, toGeminiResult } from "./gemini-result.js";
import { readGeminiStream } from "./gemini-stream.js";
import { toGeminiBody } from "./gemini-wire.js";
import { createHttpFetch } from "./http-fetch.js";
import type { ModelProvider, RemoteProviderOptions } from "./provider.js";
import { callRemote, type ErrorAnswer, jsonPost, policyOf } from "./remote-call.js";

export const GEMINI_BASE_URL = "https://generativelanguage.googleapis.com";

/** Thought signatures kept for calls of recent turns (sent back with the call, see gemini-wire.ts). */
const SIGNATURES_KEPT = 2_000;

export function createGeminiProvider(options: RemoteProviderOptions): ModelProvider {
  const { id } = options;
  const send = options.fetch ?? createHttpFetch();
  const base = `${(options.baseUrl ?? GEMINI_BASE_URL).replace(/\/+$/, "")}/v1beta/models/`;
  const headers: Record<string, string> = {
    "user-agent": "kiln",
    ...(options.apiKey ? { "x-goog-api-key": options.apiKey } : {}),
  };
  const signatures = new Map<string, string>();
  const remember = (callId: string, signature: string) => {
    signatures.set(callId, signature);
    if (signatures.size > SIGNATURES_KEPT) signatures.delete(signatures.keys().next().value as string);
  };

  return {
    id,
    async generate(request) {
      const { onDelta } = request;
      const body = JSON.stringify(toGeminiBody(request, (callId) => signatures.get(callId)));
      const model = encodeURIComponent(request.model.replace(/^models\//, ""));
      const url = onDelta ? `${base}${model}:streamGenerateContent?alt=sse` : `${base}${model}:generateContent`;
      return callRemote({
        ...policyOf(options),
        request,
        ...jsonPost(send, url, headers, body, onDelta !== undefined),
        async read(answer, fail, retries) {
          let response: GeminiResponse;
          if (answer.stream && onDelta) response = await readGeminiStream(answer.stream, onDelta, remember);
          else {
            response = JSON.parse(answer.text ?? "") as GeminiResponse;
            // An endpoint that answered JSON to a streaming call: its one answer is the stream.
            if (Array.isArray(response)) response = (response as GeminiResponse[]).at(-1) ?? {};
            assignCallIds(response, remember);
          }
          return toGeminiResult(response, request, id, retries, fail);
        },
        askedWaitMs: retryInfoMs,
      });
    },
  };
}

/** The wait a `google.rpc.RetryInfo` detail of an error body asks for (`"retryDelay": "12.5s"`). */
export function retryInfoMs(answer: ErrorAnswer): number | undefined {
  try {
    const body = JSON.parse(answer.text) as { error?: { details?: { "@type"?: string; retryDelay?: string }[] } };
    for (const detail of body.error?.details ?? []) {
      if (!detail["@type"]?.endsWith("google.rpc.RetryInfo") || typeof detail.retryDelay !== "string") continue;
      const seconds = /^(\d+(?:\.\d+)?)s$/.exec(detail.retryDelay.trim());
      if (seconds) return Number(seconds[1]) * 1000;
    }
  } catch {
    // Not JSON: no RetryInfo.
  }
  return undefined;
}
