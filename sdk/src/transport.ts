import createClient, { type Client } from "openapi-fetch";
import { jsonEvents } from "./event-stream.js";
import type { paths } from "./gen/kiln-api.js";
import { KilnError, KilnTimeoutError, retryAfterMsOf } from "./kiln-error.js";
import { type ListQuery, type Page, PaginatedList, pageQuery } from "./paginated-list.js";

export interface KilnOptions {
  /** Where the gateway listens, e.g. `http://127.0.0.1:8080` (without `/api`). */
  baseUrl: string;
  /** A user's access token (JWT). Give this or `apiKey`. */
  accessToken?: string;
  /** An API key (`sk_…`): it acts in its one organization with its scopes. Give this or `accessToken`. */
  apiKey?: string;
  /**
   * In a page the gateway serves (the console): no credential is given, the browser sends the
   * httpOnly session cookie of `POST /api/session`, and every request carries `x-kiln-csrf: 1`.
   */
  cookieSession?: boolean;
  /** Per attempt, until the whole answer is read; default 60 000. */
  timeoutMs?: number;
  /** Retries of a 429 or 503 answer; default 2. */
  maxRetries?: number;
  /** A retry the server asks to wait longer for (Retry-After) is not made: the error is thrown; default 60 000. */
  maxRetryDelayMs?: number;
  /** Default: the global fetch (Node 20+). */
  fetch?: (request: Request) => Promise<Response>;
  /** Sent with every request (e.g. `x-request-id`). */
  headers?: Record<string, string>;
}

/** Options of one call; they win over the client's. */
export interface RequestOptions {
  timeoutMs?: number;
  maxRetries?: number;
  signal?: AbortSignal;
  headers?: Record<string, string>;
}

/** Options of a creating or running call the server de-duplicates. */
export interface IdempotentRequestOptions extends RequestOptions {
  /**
   * Idempotency-Key: a retry with the same key and body within 24 h replays the first answer.
   * Default: a new random key per call, so the SDK's own retries never run anything twice.
   */
  idempotencyKey?: string;
}

/** What a family method hands openapi-fetch: the headers and the fetch of this call. */
export interface CallInit {
  headers: Record<string, string>;
  fetch: (request: Request) => Promise<Response>;
}

/** What openapi-fetch answers for one request. */
export interface FetchAnswer {
  data?: unknown;
  error?: unknown;
  response: Response;
}

/** Statuses that mean "try again later": rate limit or plan quota, and a dependency that is down. */
const RETRYABLE = new Set([429, 503]);
const BASE_BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 8_000;

/** A request a second attempt cannot run twice: a read, or a call the server de-duplicates by its key. */
const replayable = (request: Request) =>
  request.method === "GET" || request.method === "HEAD" || request.headers.has("idempotency-key");

/** Exponential backoff with jitter when the server gives no Retry-After. */
export function backoffMs(attempt: number, random = Math.random): number {
  const ceiling = Math.min(MAX_BACKOFF_MS, BASE_BACKOFF_MS * 2 ** attempt);
  return ceiling / 2 + random() * (ceiling / 2);
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

function checkOptions(options: KilnOptions): void {
  const url = typeof options?.baseUrl === "string" && URL.canParse(options.baseUrl) ? new URL(options.baseUrl) : null;
  if (url?.protocol !== "http:" && url?.protocol !== "https:") {
    throw new TypeError(`Kiln: baseUrl must be an absolute URL such as http://127.0.0.1:8080, got ${options?.baseUrl}`);
  }
  const credentials = [options.accessToken, options.apiKey, options.cookieSession || undefined].filter(
    (c) => c !== undefined,
  );
  if (credentials.length !== 1 || credentials[0] === "") {
    throw new TypeError("Kiln: give exactly one of accessToken, apiKey and cookieSession");
  }
  for (const name of ["timeoutMs", "maxRetries", "maxRetryDelayMs"] as const) {
    const value = options[name];
    if (value !== undefined && !(Number.isFinite(value) && value >= 0)) {
      throw new TypeError(`Kiln: ${name} must be a number ≥ 0, got ${value}`);
    }
  }
}

/**
 * The HTTP layer under the families: openapi-fetch (typed by the generated paths) on a fetch that
 * adds the credential, a timeout per attempt and retries of 429 and 503 honouring Retry-After (and
 * of a failed connection, for reads and keyed calls).
 */
export class Transport {
  readonly api: Client<paths>;
  readonly #options: Required<Pick<KilnOptions, "timeoutMs" | "maxRetries" | "maxRetryDelayMs">> & KilnOptions;

  constructor(options: KilnOptions) {
    checkOptions(options);
    this.#options = {
      ...options,
      timeoutMs: options.timeoutMs ?? 60_000,
      maxRetries: options.maxRetries ?? 2,
      maxRetryDelayMs: options.maxRetryDelayMs ?? 60_000,
    };
    const credential = options.accessToken ?? options.apiKey;
    this.api = createClient<paths>({
      baseUrl: options.baseUrl.replace(/\/+$/, ""),
      headers: {
        ...options.headers,
        ...(credential ? { authorization: `Bearer ${credential}` } : { "x-kiln-csrf": "1" }),
      },
    });
  }

  /** Runs one call: answers its 2xx body, or throws KilnError (or KilnTimeoutError). */
  async call<R extends FetchAnswer>(
    send: (init: CallInit) => Promise<R>,
    options: IdempotentRequestOptions = {},
    idempotent = false,
  ): Promise<NonNullable<R["data"]>> {
    const headers: Record<string, string> = { ...options.headers };
    if (idempotent) headers["idempotency-key"] = options.idempotencyKey ?? crypto.randomUUID();
    const { data, error, response } = await send({ headers, fetch: (request) => this.#send(request, options) });
    if (!response.ok) throw KilnError.fromResponse(response, error);
    return data as NonNullable<R["data"]>;
  }

  /** One call of a route whose path names the resource `{id}`: `send` gets the params with it. */
  withId<R extends FetchAnswer>(
    id: string,
    send: (init: CallInit & { params: { path: { id: string } } }) => Promise<R>,
    options?: IdempotentRequestOptions,
    idempotent = false,
  ): Promise<NonNullable<R["data"]>> {
    return this.call((init) => send({ ...init, params: { path: { id } } }), options, idempotent);
  }

  /**
   * A list route as a PaginatedList: `send` asks for one page with the wire's query (the caller's,
   * `limit` as digits, the page's cursor).
   */
  page<T, Q extends { limit?: string; cursor?: string }>(
    query: ListQuery<Q> | undefined,
    send: (init: CallInit, query: Q) => Promise<FetchAnswer & { data?: Page<T> }>,
    options?: RequestOptions,
  ): PaginatedList<T> {
    return new PaginatedList(
      (cursor) => this.call((init) => send(init, pageQuery(query, cursor)), options),
      query?.cursor,
    );
  }

  /**
   * POSTs `body` to `path` (under the base URL) and yields the JSON data of the Server-Sent Events
   * it answers, as they arrive. Neither retried nor timed out once answered: `options.signal`
   * aborts it (the server then cancels what the request started); `timeoutMs` bounds the wait for
   * the answer's headers.
   */
  async *stream<T>(path: string, body: unknown, options: RequestOptions = {}): AsyncGenerator<T> {
    const credential = this.#options.accessToken ?? this.#options.apiKey;
    const controller = new AbortController();
    const abort = () => controller.abort(options.signal?.reason);
    if (options.signal?.aborted) abort();
    options.signal?.addEventListener("abort", abort, { once: true });
    const timeoutMs = options.timeoutMs ?? this.#options.timeoutMs;
    const timer = setTimeout(() => controller.abort(new Error("timeout")), timeoutMs);
    const url = `${this.#options.baseUrl.replace(/\/+$/, "")}${path}`;
    try {
      const request = new Request(url, {
        method: "POST",
        headers: {
          ...this.#options.headers,
          ...options.headers,
          ...(credential ? { authorization: `Bearer ${credential}` } : { "x-kiln-csrf": "1" }),
          "content-type": "application/json",
          accept: "text/event-stream",
        },
        body: JSON.stringify(body),
        signal: controller.signal,
      });
      let response: Response;
      try {
        response = await (this.#options.fetch ?? ((r: Request) => fetch(r)))(request);
      } catch (e) {
        if (controller.signal.aborted && !options.signal?.aborted) throw new KilnTimeoutError("POST", url, timeoutMs);
        throw e;
      } finally {
        clearTimeout(timer);
      }
      yield* jsonEvents<T>(response);
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", abort);
      // A consumer that stops reading (break, return) ends the request too.
      controller.abort();
    }
  }

  async #send(request: Request, options: RequestOptions): Promise<Response> {
    const fetchImpl = this.#options.fetch ?? ((r: Request) => fetch(r));
    const timeoutMs = options.timeoutMs ?? this.#options.timeoutMs;
    const maxRetries = options.maxRetries ?? this.#options.maxRetries;
    for (let attempt = 0; ; attempt++) {
      const timeout = AbortSignal.timeout(timeoutMs);
      const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
      let response: Response;
      try {
        // The body is read within the attempt's timeout too; a clone keeps the request for a retry.
        const answer = await fetchImpl(new Request(request.clone(), { signal }));
        const body = await answer.arrayBuffer();
        response = new Response(body.byteLength === 0 ? null : body, answer);
      } catch (e) {
        if (timeout.aborted && !options.signal?.aborted) {
          throw new KilnTimeoutError(request.method, request.url, timeoutMs);
        }
        // A connection that failed (refused, reset, closed under the request: fetch's TypeError) is
        // tried again when another attempt cannot do anything twice: a read, or a keyed call.
        if (!(e instanceof TypeError) || options.signal?.aborted || attempt >= maxRetries || !replayable(request))
          throw e;
        await sleep(backoffMs(attempt), options.signal);
        continue;
      }
      if (!RETRYABLE.has(response.status) || attempt >= maxRetries) return response;
      const delayMs = retryAfterMsOf(response.headers.get("retry-after")) ?? backoffMs(attempt);
      if (delayMs > this.#options.maxRetryDelayMs) return response;
      await sleep(delayMs, options.signal);
    }
  }
}
