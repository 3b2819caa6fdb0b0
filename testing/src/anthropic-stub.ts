/**
 * A local stand-in for Anthropic's Messages API (POST /v1/messages), for tests: node:http on
 * 127.0.0.1 with a free port, answering as Anthropic's API reference describes (the bodies typed
 * with the official SDK's types).
 *
 *   const stub = await startAnthropicStub({ apiKey: "sk-ant-test" });
 *   stub.script(anthropicReply.overloaded({ retryAfterSeconds: 0 }), anthropicReply.text("hi"));
 *   new Anthropic({ apiKey: "sk-ant-test", baseURL: stub.baseUrl });
 *   stub.requests[0].body.system; // what was sent
 *   await stub.close();
 *
 * It checks what the API requires before using up the script: `x-api-key` (401
 * `authentication_error` when wrong or missing, with the key it got unmasked so that redaction is
 * tested the hard way), `anthropic-version` and a JSON body with `model`, `max_tokens` and
 * `messages`, at least one (400 `invalid_request_error`). Each request then takes the next scripted response;
 * once the script is empty, `respond` answers (default: the last user message's text echoed). A
 * request with `stream: true` gets the message as server-sent events (anthropic-stub-stream.ts).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Message } from "@anthropic-ai/sdk/resources/messages";
import { type AnthropicStubResponse, anthropicReply } from "./anthropic-stub-replies.js";
import { type AnthropicStreamRecord, streamMessage } from "./anthropic-stub-stream.js";

export type {
  AnthropicStubResponse,
  AnthropicStubStreaming,
  AnthropicStubUsage,
  StubThinking,
  StubToolUse,
} from "./anthropic-stub-replies.js";
export type { AnthropicStreamRecord };
export { anthropicReply };

export interface AnthropicReceivedRequest {
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

export interface AnthropicStubOptions {
  /** When set, requests must carry `x-api-key: <apiKey>`, else 401. */
  apiKey?: string;
  latencyMs?: number;
  /** Answers requests once the script is empty. */
  respond?: (request: AnthropicReceivedRequest) => AnthropicStubResponse;
  /** Streamed answers: the wait before each delta (default 0). */
  chunkDelayMs?: number;
}

export interface AnthropicStub {
  /** e.g. "http://127.0.0.1:41234": the SDK's `baseURL` (the API's paths start with /v1). */
  baseUrl: string;
  /** Every request received, in order (including those refused). */
  requests: AnthropicReceivedRequest[];
  /** Every streamed answer's timeline, in the order they ended. */
  streams: AnthropicStreamRecord[];
  script(...responses: AnthropicStubResponse[]): void;
  pending(): number;
  /** Forgets the script, the request log and the streams. */
  reset(): void;
  close(): Promise<void>;
}

/** The default answer: the text of the last user message, echoed. */
export function echoLastUserText(request: AnthropicReceivedRequest): AnthropicStubResponse {
  const messages: { role?: string; content?: unknown }[] = Array.isArray(request.body?.messages)
    ? request.body.messages
    : [];
  const last = messages.filter((m) => m.role === "user").at(-1)?.content;
  const text =
    typeof last === "string"
      ? last
      : Array.isArray(last)
        ? last
            .filter((b) => b?.type === "text")
            .map((b) => b.text)
            .join("")
        : "";
  return anthropicReply.text(text);
}

export async function startAnthropicStub(options: AnthropicStubOptions = {}): Promise<AnthropicStub> {
  const started = performance.now();
  const now = () => performance.now() - started;
  const requests: AnthropicReceivedRequest[] = [];
  const streams: AnthropicStreamRecord[] = [];
  let scripted: AnthropicStubResponse[] = [];
  let messages = 0;
  const respond = options.respond ?? echoLastUserText;

  const server = createServer((req, res) => {
    void handle(req, res).catch(() => {
      if (!res.headersSent) {
        sendJson(res, 500, { type: "error", error: { type: "api_error", message: "stub failure" }, request_id: null });
      }
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const text = await readBody(req);
    const received: AnthropicReceivedRequest = {
      method: req.method ?? "",
      path: (req.url ?? "").split("?")[0] ?? "",
      headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)])),
      body: parseJson(text),
      atMs: now(),
    };
    requests.push(received);
    const refuse = (status: number, type: Parameters<typeof anthropicReply.error>[1], message: string) =>
      answer(res, anthropicReply.error(status, type, message), received);
    if (options.apiKey !== undefined && received.headers["x-api-key"] !== options.apiKey) {
      return refuse(401, "authentication_error", `invalid x-api-key: ${received.headers["x-api-key"] ?? ""}`);
    }
    if (received.method !== "POST" || received.path !== "/v1/messages") {
      return refuse(404, "not_found_error", `Not found: ${received.method} ${received.path}`);
    }
    if (!received.headers["anthropic-version"]) {
      return refuse(400, "invalid_request_error", "anthropic-version: header is required");
    }
    const body = received.body;
    if (typeof body !== "object" || body === null) return refuse(400, "invalid_request_error", "body: not JSON");
    for (const field of ["model", "max_tokens", "messages"]) {
      if (body[field] === undefined) return refuse(400, "invalid_request_error", `${field}: Field required`);
    }
    if (!Array.isArray(body.messages) || body.messages.length === 0) {
      return refuse(400, "invalid_request_error", "messages: at least one message is required");
    }
    return answer(res, scripted.shift() ?? respond(received), received);
  }

  async function answer(res: ServerResponse, response: AnthropicStubResponse, request: AnthropicReceivedRequest) {
    if (response.type === "hang") return;
    const waitMs = (options.latencyMs ?? 0) + (response.delayMs ?? 0);
    if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
    if (res.destroyed) return;
    if (response.type === "error") {
      sendJson(res, response.status, response.body, response.headers);
      return;
    }
    const u = response.usage ?? {};
    const message: Message = {
      id: `msg_stub_${++messages}`,
      type: "message",
      role: "assistant",
      model: typeof request.body?.model === "string" ? request.body.model : "stub",
      content: response.content,
      stop_reason: response.stopReason,
      stop_sequence: response.stopSequence ?? null,
      stop_details: null,
      container: null,
      diagnostics: null,
      usage: {
        input_tokens: u.input_tokens ?? wordsOf(JSON.stringify([request.body?.system, request.body?.messages])),
        output_tokens: u.output_tokens ?? wordsOf(JSON.stringify(response.content)),
        cache_read_input_tokens: u.cache_read_input_tokens ?? 0,
        cache_creation_input_tokens: u.cache_creation_input_tokens ?? 0,
        cache_creation: null,
        output_tokens_details: u.thinking_tokens === undefined ? null : { thinking_tokens: u.thinking_tokens },
        server_tool_use: null,
        service_tier: "standard",
        inference_geo: null,
        speed: null,
      },
    };
    if (request.body?.stream === true) {
      const streamed = await streamMessage(
        res,
        {
          message,
          chunkDelayMs: response.chunkDelayMs ?? options.chunkDelayMs ?? 0,
          breakAfterDeltas: response.breakAfterDeltas,
          errorAfterDeltas: response.errorAfterDeltas,
        },
        now,
      );
      streams.push(streamed);
      return;
    }
    sendJson(res, 200, message);
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    streams,
    script: (...responses) => {
      scripted.push(...responses);
    },
    pending: () => scripted.length,
    reset: () => {
      scripted = [];
      requests.length = 0;
      streams.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    "request-id": `req_stub_${status}`,
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

function parseJson(text: string): unknown {
  if (text === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function wordsOf(text: string): number {
  return text.split(/\s+/).filter((w) => w !== "").length;
}
