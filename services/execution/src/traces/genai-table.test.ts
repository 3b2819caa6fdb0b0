import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { GENERATION_TABLE, type Source, TOOL_CALL_TABLE, TRACE_TABLE } from "./genai-table.js";

const docs = readFileSync(new URL("../../../../docs/observability.md", import.meta.url), "utf8");

/** The docs' mapping row of a field, e.g. "| `generation.inputTokens` | ... |". */
const rowOf = (field: string) => docs.split("\n").find((line) => line.startsWith(`| \`${field}\` |`)) ?? "";

const shown = (s: Source) =>
  s.read === "indexedMessages"
    ? `\`${s.key}.<N>.<field>\``
    : s.read === "parameters"
      ? `\`${s.key}.<name>\``
      : `\`${s.key}\``;

describe("the mapping table in docs/observability.md", () => {
  const tables = [
    ["generation", GENERATION_TABLE],
    ["toolCall", TOOL_CALL_TABLE],
    ["trace", TRACE_TABLE],
  ] as const;
  for (const [prefix, table] of tables) {
    for (const [field, sources] of Object.entries(table) as [string, readonly Source[]][]) {
      it(`lists every source of ${prefix}.${field} in its convention's column`, () => {
        const cells = rowOf(`${prefix}.${field}`).split(" | ");
        expect(cells.length).toBe(7);
        const column = ["GenAI", "GenAI (older)", "OpenInference", "Vercel AI SDK", "OpenLLMetry", "Langfuse"];
        for (const s of sources) expect(cells[column.indexOf(s.convention) + 1]).toContain(shown(s));
      });
    }
  }
});
