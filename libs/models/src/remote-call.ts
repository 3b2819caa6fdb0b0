/**
 * One model call to a remote provider with the call policy every remote provider shares (OpenAI,
 * Anthropic, Gemini, Bedrock): one deadline over the whole call (`timeoutMs`, retries and their
 * waits included), retries on connection failures and retryable answers (openai-retry.ts:
 * 408/409/429/5xx, Anthropic's 529 `overloaded_error` among them, an `x-should-retry` header
 * overriding), the wait the provider asked for honoured under a minute, else 0.5 s doubling up to
 * 8 s less up to 25 % jitter, a wait past the deadline failing at once, and the caller's abort
 * passed through as `ModelRequest.signal` says (docs/providers.md). A streaming call retries until
 * an answer starts streaming, never after. What differs per protocol comes in the spec: how an
 * attempt is sent (`jsonPost` for a plain JSON POST), how an answer is read, what else in an error
 * answer asks for a wait.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { callDeadline } from "@kiln/kit/abort";
import {
  backoffMs,
  connectionDetail,
  isRetryable,
  isRetryableFailure,
  providerMessageOf,
  retryAfterMsOf,
  safeExcerpt,
} from "./openai-retry.js";
import {
  abortedCallError,
  type ModelRequest,
  ProviderError,
  type ProviderErrorKind,
  type RemoteProviderOptions,
} from "./provider.js";

/** Why a stream could not be read; the call turns it into a provider_error with this message. */
export class BrokenStreamError extends Error {
  override name = "BrokenStreamError";
}

/** A wait asked for by the provider is honoured below this; above it the backoff applies. */
const MAX_ASKED_WAIT_MS = 60_000;

/** An error answer of the provider, read whole. */
export interface ErrorAnswer {
  status: number;
  headers: Headers;
  text: string;
}

/** A 2xx answer: its text, or (a streaming call whose answer streams) its body unread. */
export type SuccessAnswer =
  | { headers: Headers; text: string; stream?: undefined }
  | { headers: Headers; text?: undefined; stream: ReadableStream<Uint8Array> };

export type Fail = (
  kind: ProviderErrorKind,
  message: string,
  extra?: { status?: number; cause?: unknown; retryAfterMs?: number },
) => ProviderError;

export interface RemoteCallSpec<T> {
  provider: string;
  request: Pick<ModelRequest, "model" | "signal" | "timeoutMs" | "maxRetries">;
  /** The deadline when the request sets none. */
  timeoutMs: number;
  /** The retries when the request sets none. */
  maxRetries: number;
  /** Credentials to cut out of any provider text shown. */
  secrets: string[];
  /** One attempt (signed afresh each time, if it is signed). Redirects should be refused. */
  send(signal: AbortSignal): Promise<Response>;
  /** Whether a 2xx answer is read as it arrives (a streaming call and a streamed content type). */
  streams(response: Response): boolean;
  /**
   * The answer as the call's result (`retries`: the attempts before this one). A BrokenStreamError is a provider_error with its message;
   * any other failure, "an answer that could not be read".
   */
  read(answer: SuccessAnswer, fail: Fail, retries: number): Promise<T> | T;
  /** A wait an error answer asks for beyond Retry-After headers (Gemini's RetryInfo). */
  askedWaitMs?(answer: ErrorAnswer): number | undefined;
  /** Whether an error answer is retried; default openai-retry.ts's `isRetryable`. */
  retryable?(answer: ErrorAnswer): boolean;
  /** The provider's own message in an error answer; default the body's `error.message`. */
  messageOf?(answer: ErrorAnswer): string;
}

const EVENT_STREAM = "text/event-stream";

/** The spec's part that is the provider's options: its id, deadline, retries, and its API key as the secret. */
export function policyOf(
  options: RemoteProviderOptions,
): Pick<RemoteCallSpec<unknown>, "provider" | "timeoutMs" | "maxRetries" | "secrets"> {
  const { id: provider, timeoutMs, maxRetries, apiKey } = options;
  return { provider, timeoutMs, maxRetries, secrets: apiKey ? [apiKey] : [] };
}

/**
 * `send` and `streams` of a call that is one JSON POST (OpenAI, Anthropic, Gemini): a streaming
 * call asks for `text/event-stream` and reads a 2xx answer of that type as it arrives; redirects
 * are refused, as a model API that redirects is a wrong base URL.
 */
export function jsonPost(
  fetch: typeof globalThis.fetch,
  url: string,
  headers: Record<string, string>,
  body: string,
  streaming: boolean,
): Pick<RemoteCallSpec<unknown>, "send" | "streams"> {
  const sent = {
    "content-type": "application/json",
    ...headers,
    accept: streaming ? EVENT_STREAM : "application/json",
  };
  return {
    send: (signal) => fetch(url, { method: "POST", headers: sent, body, signal, redirect: "error" }),
    streams: (response) =>
      streaming && (response.headers.get("content-type") ?? "").toLowerCase().startsWith(EVENT_STREAM),
  };
}

type Attempt = { status: number; headers: Headers; text: string; stream?: ReadableStream<Uint8Array> };

export async function callRemote<T>(spec: RemoteCallSpec<T>): Promise<T> {
  const { provider: id, request } = spec;
  const timeoutMs = Math.max(1, Math.ceil(request.timeoutMs ?? spec.timeoutMs));
  const deadline = callDeadline(
    request.signal,
    timeoutMs,
    () => new DOMException(`no answer within ${timeoutMs} ms`, "TimeoutError"),
  );
  const { signal } = deadline;
  const deadlineAt = Date.now() + timeoutMs;
  const maxRetries = request.maxRetries ?? spec.maxRetries;
  let attempts = 0;
  const retriesNote = () => (attempts > 1 ? ` (after ${attempts - 1} ${attempts === 2 ? "retry" : "retries"})` : "");
  const fail: Fail = (kind, message, extra = {}) =>
    new ProviderError(kind, message, {
      provider: id,
      model: request.model,
      retries: Math.max(0, attempts - 1),
      ...extra,
    });

  /** The provider's error answer as the call's failure; `pastDeadline`: it asked for a wait past the deadline. */
  const answeredError = (answer: ErrorAnswer, asked: number | undefined, pastDeadline: boolean) => {
    const excerpt = safeExcerpt(spec.messageOf ? spec.messageOf(answer) : providerMessageOf(answer.text), spec.secrets);
    const wait = pastDeadline ? `; it asked to retry after ${Math.ceil(asked ?? 0)} ms, past the deadline` : "";
    return fail(
      "provider_error",
      `${id} answered HTTP ${answer.status}${excerpt ? `: ${excerpt}` : ""}${wait}${retriesNote()}`,
      { status: answer.status, retryAfterMs: asked },
    );
  };

  async function attempt(): Promise<Attempt | { failed: unknown }> {
    try {
      const response = await spec.send(signal);
      const { status, headers } = response;
      if (status >= 200 && status < 300 && response.body && spec.streams(response)) {
        return { status, headers, text: "", stream: response.body };
      }
      return { status, headers, text: await response.text() };
    } catch (failed) {
      if (signal.aborted) throw failed;
      return { failed };
    }
  }

  try {
    signal.throwIfAborted();
    for (;;) {
      attempts++;
      const outcome = await attempt();
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
        try {
          const answer: SuccessAnswer = outcome.stream
            ? { headers: outcome.headers, stream: outcome.stream }
            : { headers: outcome.headers, text: outcome.text };
          return await spec.read(answer, fail, attempts - 1);
        } catch (cause) {
          if (signal.aborted || cause instanceof ProviderError) throw cause;
          if (cause instanceof BrokenStreamError) {
            throw fail("provider_error", `${id}: ${safeExcerpt(cause.message, spec.secrets)}`, { cause });
          }
          throw fail("provider_error", `${id} returned an answer that could not be read`, { cause });
        }
      }
      const asked = retryAfterMsOf(outcome.headers) ?? spec.askedWaitMs?.(outcome);
      const retryable = spec.retryable ? spec.retryable(outcome) : isRetryable(outcome.status, outcome.headers);
      if (!retryable || attempts > maxRetries) throw answeredError(outcome, asked, false);
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
}
