/**
 * The attribute keys of a span the mapping does not read (docs/observability.md "Unmapped
 * attributes"): every attribute is stored as it came, and the span says which of them Kiln left
 * unread, so nothing goes unmapped unsaid. Read keys are those of the mapping table (genai-table.ts;
 * an indexed or parameters source reads every key below its prefix), the run and session fields
 * of the summary and the session view (trace-summary.ts, trace-exchange.ts).
 */
import { GENERATION_TABLE, type Source, TOOL_CALL_TABLE, TRACE_TABLE } from "./genai-table.js";
import type { JsonValue } from "./otlp-values.js";
import { ROOT_INPUT, ROOT_OUTPUT } from "./trace-exchange.js";

/** Keys listed per span; a span with more unread keys says its list is truncated. */
export const UNMAPPED_LIMIT = 64;

const sources: Source[] = [GENERATION_TABLE, TOOL_CALL_TABLE, TRACE_TABLE].flatMap((table) =>
  Object.values(table).flatMap((list) => [...list]),
);
const EXACT = new Set<string>([
  ...sources.filter((s) => s.read !== "indexedMessages" && s.read !== "parameters").map((s) => s.key),
  // Read beside the table: OpenLLMetry's span kind (which traceloop.entity.name is a tool), the
  // Kiln run a trace records, and a session turn's input and output.
  "traceloop.span.kind",
  "kiln.run.id",
  "kiln.run.label",
  ...ROOT_INPUT,
  ...ROOT_OUTPUT,
]);
const PREFIXES = sources.filter((s) => s.read === "indexedMessages" || s.read === "parameters").map((s) => `${s.key}.`);

const mapped = (key: string) => EXACT.has(key) || PREFIXES.some((p) => key.startsWith(p));

/** The first `UNMAPPED_LIMIT` unread keys in the order they came, and whether there were more. */
export function unmappedAttributesOf(attributes: Record<string, JsonValue>): {
  unmappedAttributes: string[];
  unmappedAttributesTruncated: boolean;
} {
  const keys: string[] = [];
  let truncated = false;
  for (const key of Object.keys(attributes)) {
    if (mapped(key)) continue;
    if (keys.length === UNMAPPED_LIMIT) {
      truncated = true;
      break;
    }
    keys.push(key);
  }
  return { unmappedAttributes: keys, unmappedAttributesTruncated: truncated };
}
