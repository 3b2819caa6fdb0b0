/**
 * A streamed Converse answer (`/converse-stream`): AWS event-stream frames (binary, each with its
 * length, headers and CRCs, decoded by `@smithy/core`'s EventStreamCodec, which checks the CRCs),
 * whose `:event-type` is messageStart, contentBlockStart (a tool call's id and name),
 * contentBlockDelta (text, or a piece of a tool call's input JSON), contentBlockStop, messageStop
 * (the stop reason) and metadata (the usage); an `:message-type` of `exception` ends the stream
 * with an error. The pieces are handed on as they arrive and the events assembled into the answer
 * `/converse` would have given, read by the same `toBedrockResult`.
 */
import { EventStreamCodec } from "@smithy/core/event-streams";
import { fromUtf8, toUtf8 } from "@smithy/core/serde";
import type { ConverseAnswer } from "./bedrock-result.js";
import type { ModelDelta } from "./provider.js";
import { BrokenStreamError } from "./remote-call.js";

const codec = new EventStreamCodec(toUtf8, fromUtf8);

interface StreamedCall {
  index: number;
  id: string;
  name: string;
  input: string;
}

/** Reads the frames to the stream's end; an exception, a bad frame or no messageStop rejects with BrokenStreamError. */
export async function readConverseStream(
  body: AsyncIterable<Uint8Array>,
  onDelta: (delta: ModelDelta) => void,
): Promise<ConverseAnswer> {
  let text = "";
  const calls = new Map<number, StreamedCall>();
  let stopReason: string | undefined;
  let usage: ConverseAnswer["usage"];
  let pending: Uint8Array = new Uint8Array(0);
  const handle = (type: string, payload: Record<string, unknown>) => {
    const block = payload.contentBlockIndex as number;
    if (type === "contentBlockStart") {
      const start = (payload.start as { toolUse?: { toolUseId?: string; name?: string } } | undefined)?.toolUse;
      if (!start) return;
      const call = { index: calls.size, id: start.toolUseId ?? "", name: start.name ?? "", input: "" };
      calls.set(block, call);
      onDelta({ type: "tool_call", index: call.index, id: call.id, name: call.name, arguments: "" });
    } else if (type === "contentBlockDelta") {
      const delta = payload.delta as { text?: string; toolUse?: { input?: string } } | undefined;
      if (typeof delta?.text === "string" && delta.text !== "") {
        text += delta.text;
        onDelta({ type: "text", text: delta.text });
      }
      const call = calls.get(block);
      if (call && typeof delta?.toolUse?.input === "string") {
        call.input += delta.toolUse.input;
        onDelta({ type: "tool_call", index: call.index, arguments: delta.toolUse.input });
      }
    } else if (type === "messageStop") stopReason = (payload.stopReason as string | undefined) ?? "end_turn";
    else if (type === "metadata") usage = payload.usage as ConverseAnswer["usage"];
  };
  for await (const bytes of body) {
    pending = concat(pending, bytes);
    while (pending.length >= 4) {
      const length = new DataView(pending.buffer, pending.byteOffset, 4).getUint32(0);
      if (pending.length < length) break;
      let message: ReturnType<typeof codec.decode>;
      try {
        message = codec.decode(pending.subarray(0, length));
      } catch {
        throw new BrokenStreamError("a streamed frame could not be decoded");
      }
      pending = pending.subarray(length);
      const header = (name: string) => String(message.headers[name]?.value ?? "");
      let payload: Record<string, unknown>;
      try {
        payload = JSON.parse(toUtf8(message.body) || "{}") as Record<string, unknown>;
      } catch {
        throw new BrokenStreamError("a streamed event is not JSON");
      }
      if (header(":message-type") !== "event") {
        const kind = header(":exception-type") || header(":error-code") || "an exception";
        const said = typeof payload.message === "string" ? `: ${payload.message}` : "";
        throw new BrokenStreamError(`the stream ended with ${kind}${said}`);
      }
      handle(header(":event-type"), payload);
    }
  }
  if (stopReason === undefined || pending.length > 0)
    throw new BrokenStreamError("the stream ended before the answer did");
  const content: NonNullable<NonNullable<ConverseAnswer["output"]>["message"]>["content"] = text ? [{ text }] : [];
  for (const call of calls.values()) {
    let input: unknown = {};
    try {
      if (call.input.trim() !== "") input = JSON.parse(call.input);
    } catch {
      throw new BrokenStreamError(`tool call "${call.name}" came with input that is not JSON`);
    }
    content.push({ toolUse: { toolUseId: call.id, name: call.name, input } });
  }
  return { output: { message: { role: "assistant", content } }, stopReason, usage };
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length === 0) return b;
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}
