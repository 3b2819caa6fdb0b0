/**
 * The Bedrock stub's scripted answers (bedrock-stub.ts) and how they go out: a Converse JSON
 * answer, or its event stream (messageStart, text deltas, a contentBlockStart and input pieces per
 * tool call, messageStop, metadata with the usage), each event an AWS event-stream frame encoded
 * by `@smithy/core`'s codec with Bedrock's headers and its `p` padding field.
 */
import { EventStreamCodec } from "@smithy/core/event-streams";
import { fromUtf8, toUtf8 } from "@smithy/core/serde";

const codec = new EventStreamCodec(toUtf8, fromUtf8);

export interface BedrockStubUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens?: number;
  cacheWriteInputTokens?: number;
}

export interface BedrockStubToolUse {
  toolUseId?: string;
  name: string;
  input: unknown;
}

export type BedrockStubResponse = (
  | {
      type: "answer";
      pieces: string[];
      toolUses?: BedrockStubToolUse[];
      stopReason: string;
      /** Default: whitespace-separated words of the request's messages and of the answer. */
      usage?: BedrockStubUsage;
      /** Streamed: after this many events, an exception frame instead of the rest. */
      exceptionAfterEvents?: number;
      exception?: { type: string; message: string };
    }
  | { type: "error"; status: number; errorType: string; message: string }
  | { type: "hang" }
) & { delayMs?: number };

type Answer = Extract<BedrockStubResponse, { type: "answer" }>;

export const bedrockReply = {
  text(text: string, options: { usage?: BedrockStubUsage; stopReason?: string; pieces?: string[] } = {}): Answer {
    const { stopReason, pieces, ...rest } = options;
    return {
      type: "answer",
      pieces: pieces ?? text.match(/\S+\s*|\s+/g) ?? [],
      stopReason: stopReason ?? "end_turn",
      ...rest,
    };
  },
  json(value: unknown, options: { usage?: BedrockStubUsage } = {}): Answer {
    return bedrockReply.text(JSON.stringify(value), options);
  },
  toolUses(toolUses: BedrockStubToolUse[], options: { usage?: BedrockStubUsage; text?: string } = {}): Answer {
    const { text, ...rest } = options;
    return { type: "answer", pieces: text ? [text] : [], toolUses, stopReason: "tool_use", ...rest };
  },
  /** An error answer: status, `x-amzn-ErrorType` and `{ message }`. */
  error(status: number, errorType: string, message: string): BedrockStubResponse {
    return { type: "error", status, errorType, message };
  },
  throttled(): BedrockStubResponse {
    return bedrockReply.error(429, "ThrottlingException", "Too many requests, please wait before trying again.");
  },
  /** A stream that starts, then ends with an exception frame. */
  streamException(text: string, afterEvents: number, type = "modelStreamErrorException"): BedrockStubResponse {
    return {
      ...bedrockReply.text(text),
      exceptionAfterEvents: afterEvents,
      exception: { type, message: "The model stream failed." },
    };
  },
  hang(): BedrockStubResponse {
    return { type: "hang" };
  },
  times(n: number, response: BedrockStubResponse): BedrockStubResponse[] {
    return Array.from({ length: n }, () => response);
  },
};

type Block = Record<string, unknown>;

/** The `/converse` JSON answer. */
export function converseAnswer(response: Answer, usage: BedrockStubUsage, ids: string[]): Record<string, unknown> {
  const text = response.pieces.join("");
  const content: Block[] = [
    ...(text ? [{ text }] : []),
    ...(response.toolUses ?? []).map((t, i) => ({ toolUse: { toolUseId: ids[i], name: t.name, input: t.input } })),
  ];
  return {
    output: { message: { role: "assistant", content } },
    stopReason: response.stopReason,
    usage: withTotal(usage),
    metrics: { latencyMs: 12 },
  };
}

/** The `/converse-stream` frames, in order (the exception frame last, if scripted). */
export function converseFrames(response: Answer, usage: BedrockStubUsage, ids: string[]): Uint8Array[] {
  const events: [string, Block][] = [["messageStart", { role: "assistant" }]];
  let index = 0;
  if (response.pieces.length > 0) {
    for (const text of response.pieces)
      events.push(["contentBlockDelta", { contentBlockIndex: index, delta: { text } }]);
    events.push(["contentBlockStop", { contentBlockIndex: index++ }]);
  }
  for (const [i, t] of (response.toolUses ?? []).entries()) {
    const input = JSON.stringify(t.input);
    const half = Math.ceil(input.length / 2);
    events.push([
      "contentBlockStart",
      { contentBlockIndex: index, start: { toolUse: { toolUseId: ids[i], name: t.name } } },
    ]);
    for (const piece of [input.slice(0, half), input.slice(half)]) {
      events.push(["contentBlockDelta", { contentBlockIndex: index, delta: { toolUse: { input: piece } } }]);
    }
    events.push(["contentBlockStop", { contentBlockIndex: index++ }]);
  }
  events.push(["messageStop", { stopReason: response.stopReason }]);
  events.push(["metadata", { usage: withTotal(usage), metrics: { latencyMs: 12 } }]);
  const frames = events.map(([type, payload]) => eventFrame(type, payload));
  if (response.exception && response.exceptionAfterEvents !== undefined) {
    return [
      ...frames.slice(0, response.exceptionAfterEvents),
      exceptionFrame(response.exception.type, response.exception.message),
    ];
  }
  return frames;
}

function eventFrame(eventType: string, payload: Block): Uint8Array {
  return codec.encode({
    headers: {
      ":event-type": { type: "string", value: eventType },
      ":content-type": { type: "string", value: "application/json" },
      ":message-type": { type: "string", value: "event" },
    },
    body: fromUtf8(JSON.stringify({ ...payload, p: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJ".slice(0, 8) })),
  });
}

function exceptionFrame(exceptionType: string, message: string): Uint8Array {
  return codec.encode({
    headers: {
      ":exception-type": { type: "string", value: exceptionType },
      ":content-type": { type: "string", value: "application/json" },
      ":message-type": { type: "string", value: "exception" },
    },
    body: fromUtf8(JSON.stringify({ message })),
  });
}

function withTotal(usage: BedrockStubUsage) {
  const total =
    usage.inputTokens + usage.outputTokens + (usage.cacheReadInputTokens ?? 0) + (usage.cacheWriteInputTokens ?? 0);
  return { ...usage, totalTokens: total };
}
