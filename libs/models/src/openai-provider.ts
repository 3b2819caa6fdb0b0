/**
 * OpenAI, and any endpoint speaking its Chat Completions protocol: one JSON POST per attempt
 * through node:http (http-fetch.ts), the answer parsed as the wire types of the official SDK
 * describe it. A streaming turn (`onDelta`) asks for `stream: true` with the usage chunk and reads
 * the server-sent events as they arrive (openai-stream.ts); retries apply until an answer starts
 * streaming, never after (an endpoint that answers JSON anyway is read as JSON). The SDK itself is not on the path: building its request and reading its answer cost
 * about half a millisecond of a run's latency and a quarter of a millisecond of CPU per call, for
 * a call that is one POST (measured against this code in the same process, sequentially).
 *
 * Retries follow the SDK's policy: connection failures and 408/409/429/5xx (an `x-should-retry`
 * header overrides), waiting what `retry-after-ms` or `Retry-After` asks when under a minute, else
 * 0.5 s doubling up to 8 s less up to 25 % jitter; at most `maxRetries` after the first attempt.
 * Around them sits one deadline per call (`timeoutMs`, retries and waits included): past it the
 * call rejects with provider_timeout, waits included; a Retry-After that reaches past the deadline
 * fails the call at once instead of waiting in vain.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { callDeadline } from "@kiln/kit/abort";
import type { ChatCompletion } from "openai/resources/chat/completions";
import { createHttpFetch } from "./http-fetch.js";
import { chatEndpointOf, OPENAI_BASE_URL } from "./openai-endpoint.js";
import {
  backoffMs,
  connectionDetail,
  isRetryable,
  isRetryableFailure,
  providerMessageOf,
  retryAfterMsOf,
  safeExcerpt,
} from "./openai-retry.js";
import { BrokenStreamError, readChatStream } from "./openai-stream.js";
import { type OpenAIProviderOptions, toRequestBody, toResult } from "./openai-wire.js";
import { abortedCallError, type ModelProvider, ProviderError, type ProviderErrorKind } from "./provider.js";

export type { OpenAIProviderOptions };
export { OPENAI_BASE_URL, safeExcerpt };

/** A wait asked for by the provider is honoured below this; above it the backoff applies (as the SDK does). */
const MAX_ASKED_WAIT_MS = 60_000;

/** One attempt's outcome: an answer with its status (a streamed one unread), or a connection that failed. */
type Attempt =
  | { status: number; headers: Headers; text: string; stream?: ReadableStream<Uint8Array> }
  | { failed: unknown };

const isEventStream = (headers: Headers) =>
  (headers.get("content-type") ?? "").toLowerCase().startsWith("text/event-stream");

export function createOpenAIProvider(options: OpenAIProviderOptions): ModelProvider {
  const { id } = options;
  const send = options.fetch ?? createHttpFetch();
  const secrets = options.apiKey ? [options.apiKey] : [];
  const endpoint = chatEndpointOf(options);
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json",
    "user-agent": "kiln",
    ...endpoint.authHeaders,
  };
  const streamHeaders = { ...headers, accept: "text/event-stream" };

  async function attempt(url: string, body: string, signal: AbortSignal, streaming: boolean): Promise<Attempt> {
    try {
      // Redirects are refused: a model API that redirects is a wrong base URL.
      const sent = { method: "POST", headers: streaming ? streamHeaders : headers, body, signal, redirect: "error" };
      const response = await send(url, sent as RequestInit);
      const { status } = response;
      if (streaming && status >= 200 && status < 300 && response.body && isEventStream(response.headers)) {
        return { status, headers: response.headers, text: "", stream: response.body };
      }
      return { status, headers: response.headers, text: await response.text() };
    } catch (failed) {
      if (signal.aborted) throw failed;
      return { failed };
    }
  }

  return {
    id,
    async generate(request) {
      const timeoutMs = Math.max(1, Math.ceil(request.timeoutMs ?? options.timeoutMs));
      const deadline = callDeadline(
        request.signal,
        timeoutMs,
        () => new DOMException(`no answer within ${timeoutMs} ms`, "TimeoutError"),
      );
      const { signal } = deadline;
      const deadlineAt = Date.now() + timeoutMs;
      const maxRetries = request.maxRetries ?? options.maxRetries;
      let attempts = 0;
      const retriesNote = () =>
        attempts > 1 ? ` (after ${attempts - 1} ${attempts === 2 ? "retry" : "retries"})` : "";
      const fail = (
        kind: ProviderErrorKind,
        message: string,
        extra: { status?: number; cause?: unknown; retryAfterMs?: number } = {},
      ) =>
        new ProviderError(kind, message, {
          provider: id,
          model: request.model,
          retries: Math.max(0, attempts - 1),
          ...extra,
        });
      try {
        signal.throwIfAborted();
        const { onDelta } = request;
        const body = JSON.stringify(toRequestBody(request, options));
        const url = endpoint.urlFor(request.model);
        for (;;) {
          attempts++;
          const outcome = await attempt(url, body, signal, onDelta !== undefined);
          if ("failed" in outcome) {
            if (!isRetryableFailure(outcome.failed) || attempts > maxRetries) {
              throw fail("provider_error", `could not reach ${id}${connectionDetail(outcome.failed)}${retriesNote()}`, {
                cause: outcome.failed,
              });
            }
            await sleep(backoffMs(attempts - 1), undefined, { signal });
            continue;
          }
          if (outcome.status >= 200 && outcome.status < 300) {
            let completion: ChatCompletion;
            try {
              completion =
                outcome.stream && onDelta
                  ? await readChatStream(outcome.stream, onDelta)
                  : (JSON.parse(outcome.text) as ChatCompletion);
            } catch (cause) {
              if (signal.aborted) throw cause;
              if (cause instanceof BrokenStreamError)
                throw fail("provider_error", `${id}: ${cause.message}`, { cause });
              throw fail("provider_error", `${id} returned an answer that could not be read`, { cause });
            }
            return toResult(completion, request, id, attempts - 1, fail);
          }
          const asked = retryAfterMsOf(outcome.headers);
          if (!isRetryable(outcome.status, outcome.headers) || attempts > maxRetries) {
            throw answeredError(outcome, asked, false);
          }
          // Waiting as asked would outlast the deadline: fail now with this answer.
          if (asked !== undefined && Date.now() + asked >= deadlineAt) throw answeredError(outcome, asked, true);
          const waitMs =
            asked !== undefined && asked >= 0 && asked < MAX_ASKED_WAIT_MS ? asked : backoffMs(attempts - 1);
          await sleep(waitMs, undefined, { signal });
        }
      } catch (error) {
        if (error instanceof ProviderError) throw error;
        if (request.signal?.aborted) {
          throw abortedCallError(request.signal, {
            provider: id,
            model: request.model,
            retries: Math.max(0, attempts - 1),
          });
        }
        if (deadline.timedOut()) {
          throw fail("provider_timeout", `${id} did not answer within ${timeoutMs} ms${retriesNote()}`, {
            cause: error,
          });
        }
        throw fail("provider_error", `${id} returned an answer that could not be read`, { cause: error });
      } finally {
        deadline.dispose();
      }

      /** The provider's error answer as the call's failure; `pastDeadline`: it asked for a wait past the deadline. */
      function answeredError(
        answer: { status: number; text: string },
        asked: number | undefined,
        pastDeadline: boolean,
      ) {
        const excerpt = safeExcerpt(providerMessageOf(answer.text), secrets);
        const wait = pastDeadline ? `; it asked to retry after ${Math.ceil(asked ?? 0)} ms, past the deadline` : "";
        return fail(
          "provider_error",
          `${id} answered HTTP ${answer.status}${excerpt ? `: ${excerpt}` : ""}${wait}${retriesNote()}`,
          {
            status: answer.status,
            retryAfterMs: asked,
          },
        );
      }
    },
  };
}
