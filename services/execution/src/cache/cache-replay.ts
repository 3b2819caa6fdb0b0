/**
 * A cached answer sent as a live run's deltas (docs/cache.md "Streaming"): its text in pieces, then
 * its calls of the caller's tools, each whole in one delta, numbered from 0 as a live turn's are.
 */
import type { ModelDelta } from "@kiln/models/provider";
import type { StepOutput } from "../runs/bindings.js";

/** Characters (code points) per replayed text piece. */
const PIECE_CHARS = 64;

export function replayAnswer(output: StepOutput, onDelta: (delta: ModelDelta) => void): void {
  const chars = Array.from(output.text);
  for (let i = 0; i < chars.length; i += PIECE_CHARS) {
    onDelta({ type: "text", text: chars.slice(i, i + PIECE_CHARS).join("") });
  }
  for (const [index, call] of (output.toolCalls ?? []).entries()) {
    onDelta({ type: "tool_call", index, id: call.id, name: call.name, arguments: JSON.stringify(call.input ?? {}) });
  }
}
