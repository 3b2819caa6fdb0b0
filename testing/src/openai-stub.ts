/**
 * A local stand-in for the OpenAI Chat Completions API (POST /v1/chat/completions) and the
 * Responses API (POST /v1/responses, openai-stub-responses.ts), for tests and benchmarks:
 * node:http on 127.0.0.1 with a free port, nothing else.
 *
 *   const stub = await startOpenAIStub({ apiKey: "sk-test", latencyMs: 50 });
 *   stub.script(...stubReply.times(2, stubReply.rateLimited({ retryAfterMs: 200 })), stubReply.text("hi"));
 *   new OpenAI({ apiKey: "sk-test", baseURL: stub.baseUrl });
 *   stub.requests[0].body.messages; // what was sent
 *   await stub.close();
 *
 * Each request takes the next scripted response, rendered in the shape of the API it called; once
 * the script is empty, `respond` answers (default: the last user message echoed back as text). Wrong or missing credentials get a 401
 * without using up the script. A request with `stream: true` gets its completion as server-sent
 * chunks (openai-stub-stream.ts), each stream's timeline in `streams`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type StubResponse, stubReply } from "./openai-stub-replies.js";
import { finishedResponse, lastUserInput, responseShell } from "./openai-stub-responses.js";
import { streamResponse } from "./openai-stub-responses-stream.js";
import { type StreamRecord, streamCompletion } from "./openai-stub-stream.js";
import { parseJson, wordsOf } from "./stub-http.js";

export type { StubResponse, StubStreaming, StubToolCall, StubUsage } from "./openai-stub-replies.js";
export type { StreamRecord };
export { stubReply };

export interface ReceivedRequest {
  method: string;
  path: string;
  /** Lower-case names. */
  headers: Record<string, string>;
  /** The parsed JSON body (the raw text when it was not JSON). */
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary fields of what was sent.
  body: any;
  /** Milliseconds since the stub started, when the request arrived. */
  atMs: number;
}

export interface OpenAIStubOptions {
  /** When set, requests must carry `Authorization: Bearer <apiKey>`, else 401. */
  apiKey?: string;
  /** Wait before every response (benchmarks: e.g. 50). */
  latencyMs?: number;
  /** Answers requests once the script is empty. */
  respond?: (request: ReceivedRequest) => StubResponse;
  /** Keep every request in `requests` (default true; a long benchmark turns it off). */
  recordRequests?: boolean;
  /** Streamed answers: the wait before each chunk after the first (default 0). */
  chunkDelayMs?: number;
  /** The ids `GET /v1/models` lists, in OpenAI's list shape (default: none, the route answers 404). */
  models?: string[];
}

export interface OpenAIStub {
  /** e.g. "http://127.0.0.1:41234/v1": the SDK's `baseURL`. */
  baseUrl: string;
  /** Every request received, in order (including those answered 401). */
  requests: ReceivedRequest[];
  /** Every streamed answer's timeline, in the order they ended. */
  streams: StreamRecord[];
  /** The stub's clock: milliseconds since it started (what `atMs` and `streams` read). */
  now(): number;
  /** Appends responses to the script. */
  script(...responses: StubResponse[]): void;
  /** Responses still scripted. */
  pending(): number;
  setLatency(ms: number): void;
  /** Requests being answered right now, and the most at once since the last reset. */
  inFlight(): number;
  maxInFlight(): number;
  /** Forgets the script, the request log and maxInFlight. */
  reset(): void;
  close(): Promise<void>;
}

/** The default answer: the last user message, echoed. */
export function echoLastUserMessage(request: ReceivedRequest): StubResponse {
  if (request.path === RESPONSES) return stubReply.text(lastUserInput(request.body));
  const messages: { role?: string; content?: unknown }[] = Array.isArray(request.body?.messages)
    ? request.body.messages
    : [];
  const last = messages.filter((m) => m.role === "user").at(-1);
  return stubReply.text(typeof last?.content === "string" ? last.content : "");
}

const RESPONSES = "/v1/responses";

export async function startOpenAIStub(options: OpenAIStubOptions = {}): Promise<OpenAIStub> {
  const started = performance.now();
  const requests: ReceivedRequest[] = [];
  const streams: StreamRecord[] = [];
  const now = () => performance.now() - started;
  let scripted: StubResponse[] = [];
  let latencyMs = options.latencyMs ?? 0;
  let inFlight = 0;
  let maxInFlight = 0;
  let completions = 0;
  const respond = options.respond ?? echoLastUserMessage;

  const server = createServer((req, res) => {
    void handle(req, res).catch(() => {
      if (!res.headersSent) sendJson(res, 500, { error: { message: "stub failure", type: "server_error" } });
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const text = await readBody(req);
    const received: ReceivedRequest = {
      method: req.method ?? "",
      path: (req.url ?? "").split("?")[0] ?? "",
      headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)])),
      body: parseJson(text),
      atMs: now(),
    };
    if (options.recordRequests !== false) requests.push(received);
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    res.on("close", () => inFlight--);

    if (options.apiKey !== undefined && received.headers.authorization !== `Bearer ${options.apiKey}`) {
      const presented = (received.headers.authorization ?? "").replace(/^Bearer\s+/i, "");
      // Like OpenAI's 401, but with the key unmasked, so redaction is tested the hard way.
      return answer(
        res,
        stubReply.error(401, { message: `Incorrect API key provided: ${presented}`, code: "invalid_api_key" }),
        received,
      );
    }
    if (options.models && received.method === "GET" && received.path === "/v1/models") {
      const data = options.models.map((id) => ({ id, object: "model", created: 0, owned_by: "stub" }));
      return sendJson(res, 200, { object: "list", data });
    }
    const known = received.path === "/v1/chat/completions" || received.path === RESPONSES;
    if (received.method !== "POST" || !known) {
      return answer(res, stubReply.error(404, { message: `no route ${received.method} ${received.path}` }), received);
    }
    return answer(res, scripted.shift() ?? respond(received), received);
  }

  async function answer(res: ServerResponse, response: StubResponse, request: ReceivedRequest): Promise<void> {
    if (response.type === "hang") return;
    const waitMs = latencyMs + (response.delayMs ?? 0);
    if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
    if (res.destroyed) return;
    if (response.type === "error") {
      sendJson(res, response.status, response.body, response.headers);
      return;
    }
    if (request.path === RESPONSES) return answerResponses(res, response, request);
    if (response.type === "failed") {
      const failed = stubReply.error(500, { message: response.message });
      if (failed.type === "error") sendJson(res, failed.status, failed.body);
      return;
    }
    const toolCalls = response.toolCalls?.map((c, i) => ({
      id: c.id ?? `call_stub_${i + 1}`,
      type: "function",
      function: {
        name: c.name,
        arguments: typeof c.arguments === "string" ? c.arguments : JSON.stringify(c.arguments),
      },
    }));
    const usage = response.usage ?? {
      prompt_tokens: wordsOf(JSON.stringify(request.body?.messages ?? [])),
      completion_tokens: wordsOf(response.content ?? "") + (toolCalls?.length ?? 0),
    };
    if (request.body?.stream === true) {
      const streamed = await streamCompletion(
        res,
        {
          id: `chatcmpl-stub-${++completions}`,
          model: typeof request.body?.model === "string" ? request.body.model : "stub",
          content: response.content,
          toolCalls: toolCalls ?? [],
          finishReason: response.finishReason,
          usage,
          includeUsage: request.body?.stream_options?.include_usage === true,
          pieces: response.pieces,
          chunkDelayMs: response.chunkDelayMs ?? options.chunkDelayMs ?? 0,
          breakAfterChunks: response.breakAfterChunks,
        },
        now,
      );
      streams.push(streamed);
      return;
    }
    sendJson(res, 200, {
      id: `chatcmpl-stub-${++completions}`,
      object: "chat.completion",
      created: 0,
      model: typeof request.body?.model === "string" ? request.body.model : "stub",
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            content: response.content,
            refusal: null,
            ...(toolCalls?.length ? { tool_calls: toolCalls } : {}),
          },
          logprobs: null,
          finish_reason: response.finishReason,
        },
      ],
      usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
    });
  }

  /** A Responses API answer: the Response, or its event stream when the request asks for one. */
  async function answerResponses(
    res: ServerResponse,
    response: Extract<StubResponse, { type: "completion" | "failed" }>,
    request: ReceivedRequest,
  ): Promise<void> {
    const n = ++completions;
    const at = Math.floor(Date.now() / 1000);
    const final = finishedResponse(response, request.body, n, at);
    if (request.body?.stream !== true) return sendJson(res, 200, final);
    const streaming = response.type === "completion" ? response : undefined;
    const streamed = await streamResponse(
      res,
      {
        shell: responseShell(request.body, n, at),
        final,
        pieces: streaming?.pieces,
        chunkDelayMs: streaming?.chunkDelayMs ?? options.chunkDelayMs ?? 0,
        breakAfterChunks: streaming?.breakAfterChunks,
      },
      now,
    );
    streams.push(streamed);
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    streams,
    now,
    script: (...responses) => {
      scripted.push(...responses);
    },
    pending: () => scripted.length,
    setLatency: (ms) => {
      latencyMs = ms;
    },
    inFlight: () => inFlight,
    maxInFlight: () => maxInFlight,
    reset: () => {
      scripted = [];
      requests.length = 0;
      streams.length = 0;
      maxInFlight = inFlight;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections(); // hanging requests included
      }),
  };
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  res.writeHead(status, {
    "content-type": typeof body === "string" ? "text/plain" : "application/json",
    "content-length": Buffer.byteLength(text),
    "x-request-id": `req_stub_${status}`,
    ...headers,
  });
  res.end(text);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}
