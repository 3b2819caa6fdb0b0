/** Checks a batch of new dataset items as a whole: one bad item refuses the batch. */
import type { FieldIssue } from "@kiln/kit/errors";
import { depthExceeds } from "@kiln/kit/json-text";
import { bytesText, LIMITS } from "@kiln/kit/limits";
import { isPlainObject } from "../domain/json-value.js";
import type { DatasetItemDoc } from "./dataset-store.js";

export const MAX_ITEMS_PER_REQUEST = LIMITS.datasetItemsPerRequest;

/** An item as sent, imported or copied: JSON values; `expectedOutput` and `metadata` undefined when absent. */
export interface NewItem {
  input: unknown;
  expectedOutput?: unknown;
  metadata?: unknown;
  source?: DatasetItemDoc["source"];
}

/** An item ready to store. */
export type CheckedItem = Pick<DatasetItemDoc, "inputJson" | "expectedOutputJson" | "metadataJson" | "source">;

const LIMIT_OF = {
  input: LIMITS.variablesBytes,
  expectedOutput: LIMITS.expectedOutputBytes,
  metadata: LIMITS.datasetMetadataBytes,
} as const;

/** The JSON text of a field's value, or the issue that refuses it (too large, too deep). */
function jsonOf(value: unknown, field: keyof typeof LIMIT_OF, at: string, issues: FieldIssue[]): string {
  const text = JSON.stringify(value) ?? "null";
  if (depthExceeds(value, LIMITS.bodyDepth))
    issues.push({ field: `${at}.${field}`, issue: `is nested too deeply (at most ${LIMITS.bodyDepth} levels)` });
  else if (Buffer.byteLength(text, "utf8") > LIMIT_OF[field])
    issues.push({ field: `${at}.${field}`, issue: `must be at most ${bytesText(LIMIT_OF[field])} as JSON` });
  return text;
}

/**
 * `at(i)` names item i in the issues (`items[3]`, or an imported file's `rows[3]`). A text holding
 * NUL is refused: no store keeps it (docs/api.md "Limits").
 */
export function checkNewItems(
  items: NewItem[],
  at: (i: number) => string = (i) => `items[${i}]`,
  field = "items",
): { items: CheckedItem[]; issues: FieldIssue[] } {
  const issues: FieldIssue[] = [];
  if (items.length === 0) issues.push({ field, issue: "must hold at least one item" });
  if (items.length > MAX_ITEMS_PER_REQUEST)
    issues.push({ field, issue: `must hold at most ${MAX_ITEMS_PER_REQUEST} items` });
  const checked = items.map((item, i): CheckedItem => {
    const place = at(i);
    if (!isPlainObject(item.input)) issues.push({ field: `${place}.input`, issue: "must be a JSON object" });
    if (item.metadata !== undefined && !isPlainObject(item.metadata))
      issues.push({ field: `${place}.metadata`, issue: "must be a JSON object" });
    const inputJson = jsonOf(item.input, "input", place, issues);
    const expectedOutputJson =
      item.expectedOutput === undefined ? null : jsonOf(item.expectedOutput, "expectedOutput", place, issues);
    const metadataJson = item.metadata === undefined ? null : jsonOf(item.metadata, "metadata", place, issues);
    for (const [name, text] of [
      ["input", inputJson],
      ["expectedOutput", expectedOutputJson],
      ["metadata", metadataJson],
    ] as const) {
      if (text?.includes("\\u0000"))
        issues.push({ field: `${place}.${name}`, issue: "must not contain NUL characters" });
    }
    return { inputJson, expectedOutputJson, metadataJson, source: item.source ?? null };
  });
  // Past a few dozen, more issues say nothing new and make a large answer.
  return { items: issues.length === 0 ? checked : [], issues: issues.slice(0, 50) };
}
