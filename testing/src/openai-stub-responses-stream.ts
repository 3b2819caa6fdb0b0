/**
 * The OpenAI stub's streamed Responses API answers (`stream: true` on `POST /v1/responses`): the
 * event sequence OpenAI sends, each event typed as the pinned SDK's `ResponseStreamEvent` and
 * written as `event: <type>` and `data: <json>` with its `sequence_number`:
 * `response.created`, `response.in_progress`, per output item `response.output_item.added`, for a
 * message `response.content_part.added`, `response.output_text.delta` (one per piece, `chunkDelayMs`
 * apart), `response.output_text.done` and `response.content_part.done`, for a function call
 * `response.function_call_arguments.delta` (its arguments in two halves) and `.done`, then
 * `response.output_item.done`; and last `response.completed`, `response.incomplete` or
 * `response.failed` with the whole response. Each stream's timeline is recorded as on Chat
 * Completions (openai-stub-stream.ts `StreamRecord`).
 */
import type { ServerResponse } from "node:http";
import type { ResponseOutputItem, ResponseStreamEvent } from "openai/resources/responses/responses";
import type { WireResponse } from "./openai-stub-responses.js";
import type { StreamRecord } from "./openai-stub-stream.js";

export interface StreamedResponse {
  /** The response as it starts (in progress, no output). */
  shell: WireResponse;
  /** The response as it ends: its status, output and usage. */
  final: WireResponse;
  /** The message's text pieces; default word by word. */
  pieces?: string[];
  chunkDelayMs: number;
  breakAfterChunks?: number;
}

// The SDK's events carry the SDK's `Response` (with its client-side `output_text`); on the wire it is absent.
type WireEvent = ResponseStreamEvent extends infer E
  ? E extends { response: unknown }
    ? Omit<E, "response" | "sequence_number"> & { response: WireResponse }
    : Omit<E, "sequence_number">
  : never;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The events of one output item after its `added` (the pieces of a message, the halves of a call's arguments), then its `done`. */
function itemSteps(item: ResponseOutputItem, at: number, pieces: string[] | undefined): WireEvent[][] {
  if (item.type === "message") {
    const part = item.content[0];
    const text = part?.type === "output_text" ? part.text : "";
    const ids = { item_id: item.id, output_index: at, content_index: 0 };
    const empty = { type: "output_text" as const, text: "", annotations: [], logprobs: [] };
    return [
      [{ type: "response.content_part.added", ...ids, part: empty }],
      ...(pieces ?? text.match(/\S+\s*|\s+/g) ?? []).map((delta): WireEvent[] => [
        { type: "response.output_text.delta", ...ids, delta, logprobs: [] },
      ]),
      [
        { type: "response.output_text.done", ...ids, text, logprobs: [] },
        { type: "response.content_part.done", ...ids, part: { ...empty, text } },
        { type: "response.output_item.done", output_index: at, item },
      ],
    ];
  }
  if (item.type === "function_call") {
    const ids = { item_id: item.id ?? "", output_index: at };
    const half = Math.ceil(item.arguments.length / 2);
    return [
      [{ type: "response.function_call_arguments.delta", ...ids, delta: item.arguments.slice(0, half) }],
      [{ type: "response.function_call_arguments.delta", ...ids, delta: item.arguments.slice(half) }],
      [
        { type: "response.function_call_arguments.done", ...ids, name: item.name, arguments: item.arguments },
        { type: "response.output_item.done", output_index: at, item },
      ],
    ];
  }
  return [[{ type: "response.output_item.done", output_index: at, item }]];
}

/** How an item looks when it is added: in progress, without its text or arguments yet. */
function started(item: ResponseOutputItem): ResponseOutputItem {
  if (item.type === "message") return { ...item, status: "in_progress", content: [] };
  if (item.type === "function_call") return { ...item, status: "in_progress", arguments: "" };
  return item;
}

/** Writes a response as its event stream; resolves with its record when done (or cut short). */
export async function streamResponse(
  res: ServerResponse,
  r: StreamedResponse,
  now: () => number,
): Promise<StreamRecord> {
  const record: StreamRecord = { firstChunkAtMs: -1, lastChunkAtMs: -1, chunks: 0, closedEarly: false, broken: false };
  let sequence = 0;
  const write = (event: WireEvent) => {
    res.write(`event: ${event.type}\ndata: ${JSON.stringify({ ...event, sequence_number: sequence++ })}\n\n`);
  };
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", "x-request-id": "req_stub" });
  res.flushHeaders();
  write({ type: "response.created", response: r.shell });
  write({ type: "response.in_progress", response: r.shell });
  const steps: WireEvent[][] = r.final.output.flatMap((item, at) => [
    [{ type: "response.output_item.added", output_index: at, item: started(item) }],
    ...itemSteps(item, at, r.pieces),
  ]);
  for (const events of steps) {
    const piece = events.some((e) => e.type.endsWith(".delta"));
    if (piece && r.chunkDelayMs > 0) await sleep(r.chunkDelayMs);
    if (res.destroyed) {
      record.closedEarly = true;
      record.lastChunkAtMs = now();
      return record;
    }
    if (piece && r.breakAfterChunks !== undefined && record.chunks >= r.breakAfterChunks) {
      record.broken = true;
      record.lastChunkAtMs = now();
      res.destroy();
      return record;
    }
    for (const event of events) write(event);
    if (piece && record.chunks++ === 0) record.firstChunkAtMs = now();
  }
  const type =
    r.final.status === "failed"
      ? "response.failed"
      : r.final.status === "incomplete"
        ? "response.incomplete"
        : "response.completed";
  write({ type, response: r.final });
  res.end();
  record.lastChunkAtMs = now();
  return record;
}
