/**
 * What a trace was asked and what it answered, for a session's conversation (docs/observability.md
 * "Sessions"): the root span's own input and output when it carries them, else the messages of the
 * trace's first model call and the answer of its last one.
 */
import { parsedJson } from "./genai-readers.js";
import type { JsonValue } from "./otlp-values.js";
import type { SpanDoc } from "./trace-store.js";
import { rootsOf } from "./trace-summary.js";

/** The root's attributes that carry its input and output, first present wins. */
export const ROOT_INPUT = ["gen_ai.input.messages", "input.value", "ai.prompt", "kiln.run.input"];
export const ROOT_OUTPUT = ["gen_ai.output.messages", "output.value", "ai.response.text", "kiln.run.output"];

const firstOf = (attributes: Record<string, JsonValue>, keys: string[]): JsonValue | undefined => {
  for (const k of keys) {
    const v = attributes[k];
    if (v !== undefined && v !== null && v !== "") return parsedJson(v);
  }
  return undefined;
};
const parsedText = (text: string | null | undefined): JsonValue | undefined =>
  text == null ? undefined : (JSON.parse(text) as JsonValue);

/** `spans` ordered by start time; each side null when nothing in the trace says. */
export function exchangeOf(spans: SpanDoc[]): { input: JsonValue | null; output: JsonValue | null } {
  const root = rootsOf(spans)[0];
  if (!root) return { input: null, output: null };
  const attributes = JSON.parse(root.attributes) as Record<string, JsonValue>;
  const generations = spans.flatMap((s) => (s.generation ? [s.generation] : []));
  const input =
    firstOf(attributes, ROOT_INPUT) ?? generations.map((g) => parsedText(g.inputMessages)).find((m) => m !== undefined);
  const output =
    firstOf(attributes, ROOT_OUTPUT) ??
    generations
      .map((g) => parsedText(g.outputMessages))
      .reverse()
      .find((m) => m !== undefined);
  return { input: input ?? null, output: output ?? null };
}
