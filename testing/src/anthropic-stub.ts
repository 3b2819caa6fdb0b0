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
 * `GET /v1/models` lists `models` (default three current Claude models) in pages, with the same
 * key and version checks (anthropic-stub-models.ts).
 */
import type { ServerResponse } from "node:http";
import type { Message } from "@anthropic-ai/sdk/resources/messages";
import { type AnthropicStubModel, modelInfosOf, modelsPage } from "./anthropic-stub-models.js";
import { type AnthropicStubResponse, anthropicReply } from "./anthropic-stub-replies.js";
import { type AnthropicStreamRecord, streamMessage } from "./anthropic-stub-stream.js";
import { createScript, listenStub, type StubRequest, sendJson as sendStubJson, wordsOf } from "./stub-http.js";

export type {
  AnthropicStubResponse,
  AnthropicStubStreaming,
  AnthropicStubUsage,
  StubThinking,
  StubToolUse,
} from "./anthropic-stub-replies.js";
export type { AnthropicStreamRecord, AnthropicStubModel };
export { anthropicReply };

/** A request as received (stub-http.ts): method, decoded path, lower-case headers, the parsed body, its arrival. */
export type AnthropicReceivedRequest = StubRequest;

export interface AnthropicStubOptions {
  /** When set, requests must carry `x-api-key: <apiKey>`, else 401. */
  apiKey?: string;
  latencyMs?: number;
  /** Answers requests once the script is empty. */
  respond?: (request: AnthropicReceivedRequest) => AnthropicStubResponse;
  /** Streamed answers: the wait before each delta (default 0). */
  chunkDelayMs?: number;
  /** What `GET /v1/models` lists, newest first (default DEFAULT_MODELS). */
  models?: AnthropicStubModel[];
  /** The most models one page of the list holds (default 1000, the API's limit). */
  pageCap?: number;
}

export const DEFAULT_MODELS: AnthropicStubModel[] = [
  { id: "claude-opus-4-6" },
  { id: "claude-sonnet-4-6" },
  { id: "claude-haiku-4-5-20251001" },
];

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
  let now = () => 0;
  const requests: AnthropicReceivedRequest[] = [];
  const streams: AnthropicStreamRecord[] = [];
  const { next, controls } = createScript<AnthropicStubResponse>([requests, streams]);
  let messages = 0;
  const respond = options.respond ?? echoLastUserText;
  const modelInfos = modelInfosOf(options.models ?? DEFAULT_MODELS);

  const server = await listenStub(async (received, res) => {
    try {
      await handle(received, res);
    } catch {
      if (!res.headersSent) {
        sendJson(res, 500, { type: "error", error: { type: "api_error", message: "stub failure" }, request_id: null });
      }
    }
  });
  now = server.now;

  async function handle(received: AnthropicReceivedRequest, res: ServerResponse): Promise<void> {
    requests.push(received);
    const refuse = (status: number, type: Parameters<typeof anthropicReply.error>[1], message: string) =>
      answer(res, anthropicReply.error(status, type, message), received);
    if (options.apiKey !== undefined && received.headers["x-api-key"] !== options.apiKey) {
      return refuse(401, "authentication_error", `invalid x-api-key: ${received.headers["x-api-key"] ?? ""}`);
    }
    const listing = received.method === "GET" && received.path === "/v1/models";
    if (!listing && (received.method !== "POST" || received.path !== "/v1/messages")) {
      return refuse(404, "not_found_error", `Not found: ${received.method} ${received.path}`);
    }
    if (!received.headers["anthropic-version"]) {
      return refuse(400, "invalid_request_error", "anthropic-version: header is required");
    }
    if (listing) {
      const page = modelsPage(modelInfos, received.query, options.pageCap);
      if (page.status === 400) return refuse(400, "invalid_request_error", page.message);
      return sendJson(res, 200, page.body);
    }
    const body = received.body;
    if (typeof body !== "object" || body === null) return refuse(400, "invalid_request_error", "body: not JSON");
    for (const field of ["model", "max_tokens", "messages"]) {
      if (body[field] === undefined) return refuse(400, "invalid_request_error", `${field}: Field required`);
    }
    if (!Array.isArray(body.messages) || body.messages.length === 0) {
      return refuse(400, "invalid_request_error", "messages: at least one message is required");
    }
    return answer(res, next() ?? respond(received), received);
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

  return {
    baseUrl: server.origin,
    requests,
    streams,
    ...controls,
    close: server.close,
  };
}

/** An answer as Anthropic's carry it: JSON with a `request-id`. */
function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  sendStubJson(res, status, body, {
    "content-type": "application/json",
    "request-id": `req_stub_${status}`,
    ...headers,
  });
}
