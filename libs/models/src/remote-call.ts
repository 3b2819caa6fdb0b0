/**
 * The call policy every remote provider shares (OpenAI's, Anthropic's, ...): one JSON POST per
 * attempt through node:http (http-fetch.ts), retried on what openai-retry.ts says is retryable
 * (connection failures, 408/409/429/5xx, Anthropic's 529 `overloaded_error` among them; an
 * `x-should-retry` header overriding), waiting what `retry-after-ms` or `Retry-After` asks when
 * under a minute, else 0.5 s doubling up to 8 s less up to 25 % jitter; at most `maxRetries`
 * after the first attempt. Around them sits one deadline per call (`timeoutMs`, retries and waits
 * included): past it the call rejects with provider_timeout; a Retry-After that reaches past the
 * deadline fails the call at once instead of waiting in vain. A streaming call (`onDelta`) retries
 * until an answer starts streaming, never after. An abort of the caller's signal rejects as
 * `ModelRequest.signal` says. The protocol (request body, answer, stream) is the provider's.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { callDeadline } from "@kiln/kit/abort";
import { createHttpFetch } from "./http-fetch.js";
import {
  backoffMs,
  connectionDetail,
  isRetryable,
  isRetryableFailure,
  providerMessageOf,
  retryAfterMsOf,
  safeExcerpt,
} from "./openai-retry.js";
import { abortedCallError, type ModelRequest, ProviderError, type ProviderErrorKind } from "./provider.js";

/** Why a stream could not be read; the call turns it into a provider_error with this message. */
export class BrokenStreamError extends Error {
  override name = "BrokenStreamError";
}

/** A wait asked for by the provider is honoured below this; above it the backoff applies (as the SDKs do). */
const MAX_ASKED_WAIT_MS = 60_000;

export interface RemoteCallOptions {
  /** The provider id, in messages ("could not reach anthropic"). */
  id: string;
  url: string;
  /** Headers of a JSON call; a streaming one asks for `text/event-stream` instead. */
  headers: Record<string, string>;
  timeoutMs: number;
  maxRetries: number;
  fetch?: typeof fetch;
  /** Strings never shown in a message (the API key). */
  secrets: string[];
  /** The provider's own message of an error answer's body (default: `error.message` of a JSON body). */
  errorMessageOf?: (text: string) => string;
}

/** A 2xx answer: its text, or, for a streaming call answered with an event stream, the stream unread. */
export interface RemoteAnswer {
  text: string;
  stream?: ReadableStream<Uint8Array>;
}

export type FailCall = (kind: ProviderErrorKind, message: string) => ProviderError;

/** One attempt's outcome: an answer with its status (a streamed one unread), or a connection that failed. */
type Attempt =
  | { status: number; headers: Headers; text: string; stream?: ReadableStream<Uint8Array> }
  | { failed: unknown };

const isEventStream = (headers: Headers) =>
  (headers.get("content-type") ?? "").toLowerCase().startsWith("text/event-stream");

/**
 * A function that makes one model call: POSTs `body` under the policy above and hands the 2xx
 * answer to `read` (with the retries made), whose result it resolves to. `read` may throw a ProviderError (through
 * `fail`), a BrokenStreamError, or anything else (then "an answer that could not be read").
 */
export function createRemoteCall(options: RemoteCallOptions) {
  const { id } = options;
  const send = options.fetch ?? createHttpFetch();
  const messageOf = options.errorMessageOf ?? providerMessageOf;
  const jsonHeaders = { accept: "application/json", ...options.headers };
  const streamHeaders = { ...jsonHeaders, accept: "text/event-stream" };

  async function attempt(body: string, signal: AbortSignal, streaming: boolean): Promise<Attempt> {
    try {
      // Redirects are refused: a model API that redirects is a wrong base URL.
      const headers = streaming ? streamHeaders : jsonHeaders;
      const sent = { method: "POST", headers, body, signal, redirect: "error" };
      const response = await send(options.url, sent as RequestInit);
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

  return async function call<T>(
    request: ModelRequest,
    body: string,
    read: (answer: RemoteAnswer, fail: FailCall, retries: number) => T | Promise<T>,
  ): Promise<T> {
    const timeoutMs = Math.max(1, Math.ceil(request.timeoutMs ?? options.timeoutMs));
    const deadline = callDeadline(
      request.signal,
      timeoutMs,
      () => new DOMException(`no answer within ${timeoutMs} ms`, "TimeoutError"),
    );
    const { signal } = deadline;
    const deadlineAt = Date.now() + timeoutMs;
    let attempts = 0;
    const retriesNote = () => (attempts > 1 ? ` (after ${attempts - 1} ${attempts === 2 ? "retry" : "retries"})` : "");
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

    /** The provider's error answer as the call's failure; `pastDeadline`: it asked for a wait past the deadline. */
    const answeredError = (
      answer: { status: number; text: string },
      asked: number | undefined,
      pastDeadline: boolean,
    ) => {
      const excerpt = safeExcerpt(messageOf(answer.text), options.secrets);
      const wait = pastDeadline ? `; it asked to retry after ${Math.ceil(asked ?? 0)} ms, past the deadline` : "";
      return fail(
        "provider_error",
        `${id} answered HTTP ${answer.status}${excerpt ? `: ${excerpt}` : ""}${wait}${retriesNote()}`,
        { status: answer.status, retryAfterMs: asked },
      );
    };

    try {
      signal.throwIfAborted();
      for (;;) {
        attempts++;
        const outcome = await attempt(body, signal, request.onDelta !== undefined);
        if ("failed" in outcome) {
          if (!isRetryableFailure(outcome.failed) || attempts > options.maxRetries) {
            throw fail("provider_error", `could not reach ${id}${connectionDetail(outcome.failed)}${retriesNote()}`, {
              cause: outcome.failed,
            });
          }
          await sleep(backoffMs(attempts - 1), undefined, { signal });
          continue;
        }
        if (outcome.status >= 200 && outcome.status < 300) {
          try {
            return await read(outcome, fail, attempts - 1);
          } catch (cause) {
            if (cause instanceof ProviderError || signal.aborted) throw cause;
            if (cause instanceof BrokenStreamError) {
              throw fail("provider_error", `${id}: ${safeExcerpt(cause.message, options.secrets)}`, { cause });
            }
            throw fail("provider_error", `${id} returned an answer that could not be read`, { cause });
          }
        }
        const asked = retryAfterMsOf(outcome.headers);
        if (!isRetryable(outcome.status, outcome.headers) || attempts > options.maxRetries) {
          throw answeredError(outcome, asked, false);
        }
        // Waiting as asked would outlast the deadline: fail now with this answer.
        if (asked !== undefined && Date.now() + asked >= deadlineAt) throw answeredError(outcome, asked, true);
        const waitMs = asked !== undefined && asked >= 0 && asked < MAX_ASKED_WAIT_MS ? asked : backoffMs(attempts - 1);
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
        throw fail("provider_timeout", `${id} did not answer within ${timeoutMs} ms${retriesNote()}`, { cause: error });
      }
      throw fail("provider_error", `${id} returned an answer that could not be read`, { cause: error });
    } finally {
      deadline.dispose();
    }
  };
}
