/**
 * Dataset items from a file's text (docs/datasets.md "Importing"): CSV, whose columns are the
 * input's variables except `expected_output` (or `expectedOutput`) and `metadata.<key>`, or JSONL,
 * one `{input, expectedOutput?, metadata?}` object a line. Rows are `rows[i]` in issues, counted
 * from 0 without the header and blank lines; the issue says the line of the file.
 */
import type { FieldIssue } from "@kiln/kit/errors";
import { CsvError, parse as parseCsv } from "csv-parse/sync";
import { tryParseJson } from "../domain/json-value.js";
import type { NewItem } from "./new-items.js";

export const ITEM_FORMATS = ["csv", "jsonl"] as const;
export type ItemFormat = (typeof ITEM_FORMATS)[number];

export const isItemFormat = (format: string): format is ItemFormat =>
  (ITEM_FORMATS as readonly string[]).includes(format);

const EXPECTED_COLUMNS = new Set(["expected_output", "expectedOutput"]);
const METADATA_PREFIX = "metadata.";
const JSONL_KEYS: Record<string, keyof NewItem> = {
  input: "input",
  expectedOutput: "expectedOutput",
  expected_output: "expectedOutput",
  metadata: "metadata",
};

export interface FileItems {
  items: NewItem[];
  issues: FieldIssue[];
}

export function itemsOfFile(format: ItemFormat, content: string): FileItems {
  if (content.trim() === "") return { items: [], issues: [{ field: "content", issue: "holds no rows" }] };
  return format === "csv" ? itemsOfCsv(content) : itemsOfJsonl(content);
}

/** A cell as a value: JSON when it holds an object or an array, else its text. */
function cellValue(text: string, field: string, line: number, issues: FieldIssue[]): unknown {
  const start = text.trimStart()[0];
  if (start !== "{" && start !== "[") return text;
  const parsed = tryParseJson(text);
  if (parsed.ok) return parsed.value;
  issues.push({ field, issue: `is not valid JSON (line ${line})` });
  return text;
}

function headerIssues(header: string[]): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const seen = new Set<string>();
  header.forEach((name, i) => {
    const at = `columns[${i}]`;
    if (name.trim() === "") issues.push({ field: at, issue: "must have a name" });
    else if (seen.has(name)) issues.push({ field: at, issue: `repeats the column ${name}` });
    else if (name.startsWith(METADATA_PREFIX) && name.length === METADATA_PREFIX.length)
      issues.push({ field: at, issue: "must name a metadata key after metadata." });
    seen.add(name);
  });
  if ([...seen].filter((n) => EXPECTED_COLUMNS.has(n)).length > 1)
    issues.push({ field: "columns", issue: "must hold one of expected_output and expectedOutput, not both" });
  return issues;
}

function itemsOfCsv(content: string): FileItems {
  let records: { record: string[]; info: { lines: number } }[];
  try {
    // With `info`, each record comes as {record, info}: the line a row ends on names it in issues.
    records = parseCsv(content, { bom: true, skip_empty_lines: true, info: true }) as unknown as typeof records;
  } catch (e) {
    if (!(e instanceof CsvError)) throw e;
    const line = typeof e.lines === "number" ? `line ${e.lines}: ` : "";
    return { items: [], issues: [{ field: "content", issue: `is not CSV (${line}${e.message})` }] };
  }
  const [head, ...rows] = records;
  if (!head || rows.length === 0)
    return { items: [], issues: [{ field: "content", issue: "holds a header and no rows" }] };
  const header = head.record;
  const issues = headerIssues(header);
  if (issues.length > 0) return { items: [], issues };
  const items = rows.map(({ record, info }, i): NewItem => {
    const input: Record<string, unknown> = {};
    const metadata: Record<string, unknown> = {};
    let expectedOutput: unknown;
    header.forEach((name, c) => {
      const text = record[c] ?? "";
      const field = `rows[${i}].${name}`;
      if (EXPECTED_COLUMNS.has(name)) {
        if (text !== "") expectedOutput = cellValue(text, field, info.lines, issues);
      } else if (name.startsWith(METADATA_PREFIX)) {
        if (text !== "") metadata[name.slice(METADATA_PREFIX.length)] = cellValue(text, field, info.lines, issues);
      } else input[name] = cellValue(text, field, info.lines, issues);
    });
    return { input, expectedOutput, ...(Object.keys(metadata).length > 0 && { metadata }) };
  });
  return { items, issues };
}

function itemsOfJsonl(content: string): FileItems {
  const items: NewItem[] = [];
  const issues: FieldIssue[] = [];
  for (const [n, line] of content.split(/\r?\n/).entries()) {
    if (line.trim() === "") continue;
    const at = `rows[${items.length}]`;
    const parsed = tryParseJson(line);
    const value = parsed.ok ? parsed.value : undefined;
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      issues.push({ field: at, issue: `${parsed.ok ? "is not a JSON object" : "is not valid JSON"} (line ${n + 1})` });
      items.push({ input: {} });
      continue;
    }
    const item: NewItem = { input: undefined };
    for (const [key, v] of Object.entries(value)) {
      const name = JSONL_KEYS[key];
      if (!name) issues.push({ field: `${at}.${key}`, issue: `is not allowed (line ${n + 1})` });
      else if (name === "input" || v !== null) Object.assign(item, { [name]: v });
    }
    items.push(item);
  }
  return { items, issues };
}
