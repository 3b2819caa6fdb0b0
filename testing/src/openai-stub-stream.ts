/**
 * The OpenAI stub's streamed answers (`stream: true`): `chat.completion.chunk` server-sent events
 * as OpenAI sends them (role first, the content in pieces, each tool call's id and name then its
 * arguments, the finish chunk, the usage chunk when `stream_options.include_usage` asks, then
 * `data: [DONE]`), `chunkDelayMs` apart. Each stream's timeline is recorded (`StreamRecord`, on
 * the stub's clock) so tests can order what a client received against what the stub had sent.
 */
import type { ServerResponse } from "node:http";
import type { StubUsage } from "./openai-stub-replies.js";

export interface StreamRecord {
  /** Stub clock (ms since it started) when the first content or tool-call chunk was written, and when the stream ended. */
  firstChunkAtMs: number;
  lastChunkAtMs: number;
  /** Content and tool-call chunks written. */
  chunks: number;
  /** The client went away before the end (the rest was not sent). */
  closedEarly: boolean;
  /** The stub broke the connection off on purpose (`breakAfterChunks`). */
  broken: boolean;
}

export interface StreamedCompletion {
  id: string;
  model: string;
  content: string | null;
  toolCalls: { id: string; type: string; function: { name: string; arguments: string } }[];
  finishReason: string;
  usage: StubUsage;
  includeUsage: boolean;
  /** The content's pieces; default: word by word (each piece keeps its trailing space). */
  pieces?: string[];
  chunkDelayMs: number;
  /** Destroy the connection after this many content chunks (a provider that drops mid-answer). */
  breakAfterChunks?: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Writes a completion as a stream of chunks; resolves with its record when done (or cut short). */
export async function streamCompletion(
  res: ServerResponse,
  c: StreamedCompletion,
  now: () => number,
): Promise<StreamRecord> {
  const record: StreamRecord = { firstChunkAtMs: -1, lastChunkAtMs: -1, chunks: 0, closedEarly: false, broken: false };
  const base = { id: c.id, object: "chat.completion.chunk", created: 0, model: c.model };
  const write = (choices: unknown[], usage?: unknown) => {
    res.write(`data: ${JSON.stringify({ ...base, choices, ...(usage !== undefined ? { usage } : {}) })}\n\n`);
  };
  const delta = (d: Record<string, unknown>, finish: string | null = null) =>
    write([{ index: 0, delta: d, logprobs: null, finish_reason: finish }], c.includeUsage ? null : undefined);
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", "x-request-id": "req_stub" });
  res.flushHeaders();
  const pieces = c.pieces ?? c.content?.match(/\S+\s*|\s+/g) ?? [];
  const steps: Record<string, unknown>[] = [
    ...pieces.map((content) => ({ content })),
    ...c.toolCalls.flatMap((call, index) => {
      const half = Math.ceil(call.function.arguments.length / 2);
      const first = { name: call.function.name, arguments: call.function.arguments.slice(0, half) };
      return [
        { tool_calls: [{ index, id: call.id, type: "function", function: first }] },
        { tool_calls: [{ index, function: { arguments: call.function.arguments.slice(half) } }] },
      ];
    }),
  ];
  delta({ role: "assistant", content: "", refusal: null });
  for (const step of steps) {
    if (c.chunkDelayMs > 0) await sleep(c.chunkDelayMs);
    if (res.destroyed) {
      record.closedEarly = true;
      record.lastChunkAtMs = now();
      return record;
    }
    if (c.breakAfterChunks !== undefined && record.chunks >= c.breakAfterChunks) {
      record.broken = true;
      record.lastChunkAtMs = now();
      res.destroy();
      return record;
    }
    delta(step);
    if (record.chunks++ === 0) record.firstChunkAtMs = now();
  }
  delta({}, c.finishReason);
  if (c.includeUsage) {
    write([], { ...c.usage, total_tokens: c.usage.prompt_tokens + c.usage.completion_tokens });
  }
  res.end("data: [DONE]\n\n");
  record.lastChunkAtMs = now();
  return record;
}
