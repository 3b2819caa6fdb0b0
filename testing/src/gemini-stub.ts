/**
 * A local stand-in for the Gemini API (REST v1beta, `models/{model}:generateContent` and
 * `:streamGenerateContent`), for tests: node:http on 127.0.0.1 with a free port.
 *
 *   const stub = await startGeminiStub({ apiKey: "AIza-test" });
 *   stub.script(geminiReply.rateLimited({ retryDelay: "0.2s" }), geminiReply.text("hi"));
 *   new GoogleGenAI({ apiKey: "AIza-test", httpOptions: { baseUrl: stub.baseUrl } });
 *   stub.requests[0].body.contents; // what was sent
 *
 * As the API does: the key comes in `x-goog-api-key` (or `?key=`), a missing one is 403
 * PERMISSION_DENIED and a wrong one 400 INVALID_ARGUMENT (reason API_KEY_INVALID); a body the API
 * would refuse is 400 INVALID_ARGUMENT (gemini-stub-check.ts); `?alt=sse` streams server-sent
 * events, each a whole GenerateContentResponse (one text piece or the calls each, the finish
 * reason and the whole usage in the last), and without it the stream comes as one JSON array.
 * Each request takes the next scripted response; once the script is empty, the last user text is
 * echoed. Function calls carry no id unless scripted with one (the Gemini API sends none).
 * `GET /v1beta/models` lists `models` in pages, with the same key checks (gemini-stub-models.ts).
 */
import { randomUUID } from "node:crypto";
import type { ServerResponse } from "node:http";
import { refusalOf } from "./gemini-stub-check.js";
import { DEFAULT_GEMINI_MODELS, type GeminiStubModel, modelsPage } from "./gemini-stub-models.js";
import { type GeminiStubResponse, type GeminiStubUsage, geminiReply, googleError } from "./gemini-stub-replies.js";
import { createScript, listenStub, pause, type StubRequest, sendJson, wordsOf } from "./stub-http.js";

export type { GeminiStubCall, GeminiStubResponse, GeminiStubUsage } from "./gemini-stub-replies.js";
export type { GeminiStubModel, StubRequest };
export { geminiReply };

export interface GeminiStubOptions {
  /** When set, requests must carry this key. */
  apiKey?: string;
  /** Streamed answers: the wait before each event after the first (default 0). */
  chunkDelayMs?: number;
  /** What `GET /v1beta/models` lists (default DEFAULT_GEMINI_MODELS). */
  models?: GeminiStubModel[];
  /** The most models one page of the list holds (default 1000, the API's most). */
  pageCap?: number;
}

export interface GeminiStub {
  /** e.g. "http://127.0.0.1:41234": the SDK's `httpOptions.baseUrl` (the API version goes after it). */
  baseUrl: string;
  /** Every request received, in order (those refused included). */
  requests: StubRequest[];
  script(...responses: GeminiStubResponse[]): void;
  pending(): number;
  reset(): void;
  close(): Promise<void>;
}

const ROUTE = /^\/(v1beta|v1)\/models\/([^/:]+):(generateContent|streamGenerateContent)$/;
const LIST_ROUTE = /^\/(v1beta|v1)\/models$/;

export async function startGeminiStub(options: GeminiStubOptions = {}): Promise<GeminiStub> {
  const requests: StubRequest[] = [];
  const { next, controls } = createScript<GeminiStubResponse>([requests]);

  const { origin, close } = await listenStub(async (request, res) => {
    requests.push(request);
    const route = ROUTE.exec(request.path);
    const listing = request.method === "GET" && LIST_ROUTE.test(request.path);
    if (!listing && (request.method !== "POST" || !route)) {
      return sendJson(res, 404, googleError(404, `Requested entity was not found: ${request.method} ${request.path}`));
    }
    const key = request.headers["x-goog-api-key"] ?? request.query.key;
    if (options.apiKey !== undefined && key === undefined) {
      return sendJson(
        res,
        403,
        googleError(
          403,
          "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
        ),
      );
    }
    if (options.apiKey !== undefined && key !== options.apiKey) {
      return sendJson(
        res,
        400,
        googleError(400, "API key not valid. Please pass a valid API key.", [
          { "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "API_KEY_INVALID", domain: "googleapis.com" },
        ]),
      );
    }
    if (listing) {
      const page = modelsPage(options.models ?? DEFAULT_GEMINI_MODELS, request.query, options.pageCap);
      return "invalid" in page ? sendJson(res, 400, googleError(400, page.invalid)) : sendJson(res, 200, page);
    }
    if (!route) return sendJson(res, 404, googleError(404, "Requested entity was not found."));
    const refusal = refusalOf(request.body);
    if (refusal) return sendJson(res, 400, googleError(400, refusal));
    const response = next() ?? echo(request);
    if (response.type === "hang") return;
    await pause(response.delayMs ?? 0);
    if (res.destroyed) return;
    if (response.type === "error") return sendJson(res, response.status, response.body, response.headers);
    const events = eventsOf(response, route[2] ?? "", request);
    if (route[3] === "generateContent") return sendJson(res, 200, whole(events));
    if (request.query.alt !== "sse") return sendJson(res, 200, events);
    await streamEvents(res, events, response.breakAfterEvents, options.chunkDelayMs ?? 0);
  });

  return {
    baseUrl: origin,
    requests,
    ...controls,
    close,
  };
}

function echo(request: StubRequest): GeminiStubResponse {
  // biome-ignore lint/suspicious/noExplicitAny: the request as sent.
  const users = (request.body.contents as any[]).filter((c) => c.role !== "model");
  // biome-ignore lint/suspicious/noExplicitAny: the request as sent.
  const text = ((users.at(-1)?.parts ?? []) as any[]).map((p) => p.text ?? "").join("");
  return geminiReply.text(text);
}

// biome-ignore lint/suspicious/noExplicitAny: GenerateContentResponse JSON.
type Event = Record<string, any>;

/** The answer as stream events: a thought, each text piece, the calls; finish reason and usage in the last. */
function eventsOf(response: Extract<GeminiStubResponse, { type: "answer" }>, model: string, request: StubRequest) {
  const text = response.pieces.join("");
  const calls = response.calls ?? [];
  const usage: GeminiStubUsage = response.usage ?? {
    promptTokenCount: wordsOf(JSON.stringify(request.body.contents)),
    candidatesTokenCount: wordsOf(text) + calls.length,
  };
  const full = {
    ...usage,
    totalTokenCount: usage.promptTokenCount + (usage.candidatesTokenCount ?? 0) + (usage.thoughtsTokenCount ?? 0),
    promptTokensDetails: [{ modality: "TEXT", tokenCount: usage.promptTokenCount }],
  };
  const base = { modelVersion: model, responseId: randomUUID().replaceAll("-", "").slice(0, 22) };
  if (response.blockReason) {
    return [
      {
        promptFeedback: { blockReason: response.blockReason },
        usageMetadata: { promptTokenCount: usage.promptTokenCount, totalTokenCount: usage.promptTokenCount },
        ...base,
      },
    ];
  }
  const groups: Event[][] = [
    ...(response.thought ? [[{ text: response.thought, thought: true }]] : []),
    ...response.pieces.map((piece) => [{ text: piece }]),
    ...(calls.length > 0
      ? [
          calls.map((c) => ({
            functionCall: { name: c.name, args: c.args ?? {}, ...(c.id ? { id: c.id } : {}) },
            ...(c.thoughtSignature ? { thoughtSignature: c.thoughtSignature } : {}),
          })),
        ]
      : []),
  ];
  if (groups.length === 0) groups.push([{ text: "" }]);
  return groups.map((parts, i): Event => {
    const last = i === groups.length - 1;
    return {
      candidates: [
        { content: { parts, role: "model" }, ...(last ? { finishReason: response.finishReason } : {}), index: 0 },
      ],
      usageMetadata: last
        ? full
        : { promptTokenCount: usage.promptTokenCount, totalTokenCount: usage.promptTokenCount },
      ...base,
    };
  });
}

/** The events as the one answer of generateContent: their parts in one candidate, adjacent texts joined. */
function whole(events: Event[]): Event {
  const last = events.at(-1) as Event;
  if (!last.candidates) return last;
  const parts: Event[] = [];
  for (const event of events) {
    for (const part of event.candidates[0].content.parts as Event[]) {
      const prev = parts.at(-1);
      if (prev && "text" in prev && "text" in part && !prev.thought && !part.thought) prev.text += part.text;
      else parts.push({ ...part });
    }
  }
  return { ...last, candidates: [{ ...last.candidates[0], content: { parts, role: "model" } }] };
}

async function streamEvents(res: ServerResponse, events: Event[], breakAfter: number | undefined, delayMs: number) {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  res.flushHeaders();
  for (const [i, event] of events.entries()) {
    if (i > 0) await pause(delayMs);
    if (breakAfter !== undefined && i >= breakAfter) {
      // What was sent reaches the client first: the break comes after those events, not instead.
      await pause(20);
      res.destroy();
      return;
    }
    if (res.destroyed) return;
    await new Promise((written) => res.write(`data: ${JSON.stringify(event)}\r\n\r\n`, written));
  }
  res.end();
}
