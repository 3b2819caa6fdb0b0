/**
 * What of a streaming run's model turns reaches its caller: every piece of text, and the calls of
 * the caller's own tools (the calls of the version's tools run inside Kiln and do not stream),
 * numbered from 0 in each turn among those that stream.
 */
import type { ModelDelta } from "@kiln/models/provider";

export interface RunDeltaStream {
  /** A model turn begins: tool calls are numbered anew. */
  newTurn(): void;
  /** Hands a provider's delta on, or drops it. */
  onDelta(delta: ModelDelta): void;
  /** The text streamed so far, every turn's. */
  text(): string;
}

export function streamOf(forward: (delta: ModelDelta) => void, isCallerTool: Set<string>): RunDeltaStream {
  let text = "";
  /** This turn's tool calls by the provider's index: the caller's index, or null for a dropped call. */
  let calls = new Map<number, number | null>();
  let forwarded = 0;
  return {
    newTurn() {
      calls = new Map();
      forwarded = 0;
    },
    onDelta(delta) {
      if (delta.type === "text") {
        text += delta.text;
        forward(delta);
        return;
      }
      let index = calls.get(delta.index);
      if (index === undefined) {
        // A call's first delta names it.
        index = delta.name !== undefined && isCallerTool.has(delta.name) ? forwarded++ : null;
        calls.set(delta.index, index);
      }
      if (index !== null) forward({ ...delta, index });
    },
    text: () => text,
  };
}
