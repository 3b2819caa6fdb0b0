/**
 * The fetch OpenAI-protocol provider calls go through (openai-provider.ts): node:http(s) with keep-alive agents, and a
 * standard `Response` built from the whole answer. Node's global fetch (undici's WHATWG fetch)
 * spent about four times the CPU of this per call, building a `Request`, turning the body into a
 * web stream and answering with another one: a third of the execution service's CPU per run
 * under load. A provider call needs none of that: a JSON body goes out, a JSON body comes back.
 *
 * What it keeps from fetch: an aborted signal rejects with its reason; a failed connection rejects
 * with `TypeError("fetch failed")` whose `cause` is the socket error (ECONNREFUSED…); gzip, deflate
 * and br answers are decompressed. What it does not do: follow redirects (it answers
 * REDIRECT_REFUSED, as the provider asked of fetch: a model API that redirects is a wrong base
 * URL). A request that accepts `text/event-stream` and gets a 2xx answer of that type resolves at
 * the answer's headers with the body as a web stream read as it arrives (a streaming call, see
 * openai-stream.ts); aborting the signal then ends that stream. Anything it does not handle (a `Request` object, a streamed or form body) goes to the
 * global fetch. Idle sockets are kept as long as the server's `Keep-Alive` hint allows, else 4 s.
 */
import { type Agent, Agent as HttpAgent, request as httpRequest, type IncomingMessage } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { Readable } from "node:stream";
import { brotliDecompressSync, gunzipSync, inflateSync } from "node:zlib";

/** Statuses whose response has no body (the Response constructor refuses one). */
const NULL_BODY = new Set([101, 204, 205, 304]);
const IDLE_SOCKET_MS = 4_000;
/** Answers read as they arrive: server-sent events, and AWS event-stream frames (bedrock-stream.ts). */
const STREAMED_TYPES = ["text/event-stream", "application/vnd.amazon.eventstream"];

export function createHttpFetch(): typeof fetch {
  const agents: Record<"http:" | "https:", Agent> = {
    "http:": new HttpAgent({ keepAlive: true, timeout: IDLE_SOCKET_MS }),
    "https:": new HttpsAgent({ keepAlive: true, timeout: IDLE_SOCKET_MS }),
  };

  return function httpFetch(input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
    const body = init.body;
    const simpleBody = body === undefined || body === null || typeof body === "string" || body instanceof Uint8Array;
    const url = typeof input === "string" ? new URL(input) : input instanceof URL ? input : undefined;
    if (!url || !simpleBody || (url.protocol !== "http:" && url.protocol !== "https:")) {
      return globalThis.fetch(input, init);
    }
    const signal = init.signal ?? undefined;
    if (signal?.aborted) return Promise.reject(signal.reason);
    const headers: Record<string, string> = {};
    for (const [name, value] of new Headers(init.headers)) headers[name] = value;
    const wantsEvents = STREAMED_TYPES.some((type) => headers.accept?.includes(type));
    if (body !== undefined && body !== null) headers["content-length"] = String(Buffer.byteLength(body));

    return new Promise<Response>((resolve, reject) => {
      const send = url.protocol === "https:" ? httpsRequest : httpRequest;
      const req = send(url, { method: init.method ?? "GET", headers, agent: agents[url.protocol as "http:"] });
      const onAbort = () => {
        req.destroy();
        reject(signal?.reason);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      const done = () => signal?.removeEventListener("abort", onAbort);
      req.on("error", (err) => {
        done();
        reject(new TypeError("fetch failed", { cause: err }));
      });
      req.on("response", (res: IncomingMessage) => {
        const status = res.statusCode ?? 0;
        if (status >= 300 && status < 400 && res.headers.location !== undefined) {
          res.resume();
          done();
          const cause = Object.assign(new Error("unexpected redirect"), { code: "REDIRECT_REFUSED" });
          reject(new TypeError("fetch failed", { cause }));
          return;
        }
        if (wantsEvents && status >= 200 && status < 300 && isEventStream(res)) {
          res.on("close", done);
          resolve(streamedResponse(res, status));
          return;
        }
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("error", (err) => {
          done();
          reject(new TypeError("fetch failed", { cause: err }));
        });
        res.on("end", () => {
          done();
          try {
            const answered = new Headers();
            for (let i = 0; i < res.rawHeaders.length; i += 2) {
              answered.append(res.rawHeaders[i] as string, res.rawHeaders[i + 1] as string);
            }
            const raw = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
            const decoded = decode(raw, answered);
            resolve(
              new BufferedResponse(NULL_BODY.has(status) ? null : decoded, {
                status,
                statusText: res.statusMessage ?? "",
                headers: answered,
              }),
            );
          } catch (err) {
            reject(new TypeError("fetch failed", { cause: err }));
          }
        });
      });
      req.end(body ?? undefined);
    });
  };
}

function isEventStream(res: IncomingMessage): boolean {
  const type = (res.headers["content-type"] ?? "").toLowerCase();
  return STREAMED_TYPES.some((streamed) => type.startsWith(streamed));
}

/** A `Response` whose body is the answer as it arrives. */
function streamedResponse(res: IncomingMessage, status: number): Response {
  const headers = new Headers();
  for (let i = 0; i < res.rawHeaders.length; i += 2)
    headers.append(res.rawHeaders[i] as string, res.rawHeaders[i + 1] as string);
  return new Response(Readable.toWeb(res) as ReadableStream<Uint8Array>, {
    status,
    statusText: res.statusMessage ?? "",
    headers,
  });
}

/**
 * A standard `Response` over a body already read whole: `text()`, `json()` and `arrayBuffer()`
 * read the bytes directly; the web stream fetch would build for the body (and read back through
 * its reader) is made only when something asks for `body`. About a third of the provider call's
 * CPU went to that stream when the OpenAI SDK, then on this path, read a JSON answer; the provider
 * now reads `text()`.
 */
class BufferedResponse extends (Response as new (
  body: null,
  init: ResponseInit,
) => Omit<Response, "body" | "bodyUsed" | "text" | "json" | "arrayBuffer" | "clone">) {
  #bytes: Buffer | null;
  #stream: Response | undefined;
  #used = false;

  constructor(bytes: Buffer | null, init: ResponseInit) {
    super(null, init);
    this.#bytes = bytes;
  }

  /** The body as a stream, made on first use (after which the bytes are the stream's). */
  #streamed(): Response {
    this.#stream ??= new Response(this.#bytes);
    return this.#stream;
  }

  #take(): Buffer {
    if (this.#stream || this.#used) throw new TypeError("Body is unusable: Body has already been read");
    this.#used = true;
    return this.#bytes ?? Buffer.alloc(0);
  }

  get body(): ReadableStream<Uint8Array> | null {
    return this.#bytes === null ? null : this.#streamed().body;
  }

  get bodyUsed(): boolean {
    return this.#used || (this.#stream?.bodyUsed ?? false);
  }

  async text(): Promise<string> {
    return this.#stream ? this.#stream.text() : this.#take().toString("utf8");
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text());
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    if (this.#stream) return this.#stream.arrayBuffer();
    const bytes = this.#take();
    return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  }

  clone(): Response {
    if (this.bodyUsed) throw new TypeError("Response.clone: Body has already been consumed.");
    return new BufferedResponse(this.#bytes, {
      status: this.status,
      statusText: this.statusText,
      headers: this.headers,
    });
  }
}

/** The body as sent, decompressed when the server compressed it (the encoding headers then go, as fetch drops them). */
function decode(raw: Buffer, headers: Headers): Buffer {
  const encoding = headers.get("content-encoding")?.trim().toLowerCase();
  if (!encoding || encoding === "identity" || raw.length === 0) return raw;
  const decoded =
    encoding === "gzip" || encoding === "x-gzip"
      ? gunzipSync(raw)
      : encoding === "deflate"
        ? inflateSync(raw)
        : encoding === "br"
          ? brotliDecompressSync(raw)
          : undefined;
  if (!decoded) return raw;
  headers.delete("content-encoding");
  headers.delete("content-length");
  return decoded;
}
