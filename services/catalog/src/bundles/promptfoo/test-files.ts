/**
 * promptfoo tests kept in files (`tests: file://tests.csv`): CSV, YAML, JSON and JSONL, each read
 * into promptfoo's own test objects (a CSV row's `__expected` columns become assertions as
 * promptfoo reads them), for tests.ts to convert like tests written in the config.
 */
import { parse as parseCsv } from "csv-parse/sync";
import { isObject, type Json, type JsonObject } from "./config.js";
import { type ConfigFiles, extensionOf, filePathOf, parseStructured, readRef } from "./files.js";

/** One test read from a file, with its place (`tests.csv[2]`). */
export interface FileTest {
  test: Json;
  at: string;
}

/** The tests of one referenced file (none, with a warning naming the file, when it cannot be read). */
export function testsFromFile(ref: string, files: ConfigFiles, at: string, warnings: string[]): FileTest[] {
  const text = readRef(ref, files, at, "its tests are skipped", warnings);
  if (text === undefined) return [];
  const path = filePathOf(ref);
  const ext = extensionOf(path);
  const place = (i: number) => `${path}[${i}]`;
  if (ext === "csv" || ext === "tsv") {
    let rows: Record<string, string>[];
    try {
      rows = parseCsv(text, {
        columns: true,
        bom: true,
        skip_empty_lines: true,
        trim: false,
        delimiter: ext === "tsv" ? "\t" : ",",
      });
    } catch (e) {
      warnings.push(`${at}: ${ref} is not CSV (${e instanceof Error ? e.message : String(e)}); its tests are skipped`);
      return [];
    }
    return rows.map((row, i) => ({ test: testOfRow(row, place(i), warnings), at: place(i) }));
  }
  if (ext === "jsonl") {
    const out: FileTest[] = [];
    for (const [i, line] of text.split(/\r?\n/).entries()) {
      if (line.trim() === "") continue;
      try {
        out.push({ test: JSON.parse(line) as Json, at: `${path}:${i + 1}` });
      } catch {
        warnings.push(`${at}: ${ref} line ${i + 1} is not JSON; skipped`);
      }
    }
    return out;
  }
  if (ext === "yaml" || ext === "yml" || ext === "json") {
    const value = parseStructured(text, ref, at, warnings);
    if (value === undefined) return [];
    const list = Array.isArray(value) ? value : [value];
    return list.map((test, i) => ({ test, at: place(i) }));
  }
  warnings.push(`${at}: ${ref} is not a tests file Kiln reads (CSV, YAML, JSON or JSONL); its tests are skipped`);
  return [];
}

/** promptfoo's assertion shorthand in a CSV cell (`icontains:bonjour`, `similar(0.8):…`, `grade:…`). */
const SHORTHAND = /^(not-)?([a-z][a-z0-9-]*)(?:\((\d+(?:\.\d+)?)\))?(?::([\s\S]*))?$/;
const ALIASES: Record<string, string> = { grade: "llm-rubric", fn: "javascript", eval: "javascript" };
const KNOWN = new Set([
  "equals",
  "contains",
  "icontains",
  "contains-any",
  "icontains-any",
  "contains-all",
  "icontains-all",
  "starts-with",
  "regex",
  "is-json",
  "contains-json",
  "javascript",
  "python",
  "similar",
  "levenshtein",
  "llm-rubric",
  "model-graded-closedqa",
  "factuality",
  "answer-relevance",
  "classifier",
  "cost",
  "latency",
  "perplexity",
  "rouge-n",
  "bleu",
  "webhook",
]);

/** A CSV cell's assertion as promptfoo reads it; text that names no assertion is `equals`. */
export function assertionOfCell(cell: string): JsonObject {
  const m = SHORTHAND.exec(cell.trim());
  const name = m ? (ALIASES[m[2] ?? ""] ?? m[2] ?? "") : "";
  if (!m || !KNOWN.has(name) || (m[4] === undefined && !["is-json", "contains-json"].includes(name)))
    return { type: "equals", value: cell };
  const type = `${m[1] ?? ""}${name}`;
  const list = ["contains-any", "icontains-any", "contains-all", "icontains-all"].includes(name);
  const raw = m[4];
  const value: Json | undefined = raw === undefined ? undefined : list ? raw.split(",").map((s) => s.trim()) : raw;
  const threshold = m[3] === undefined ? undefined : Number(m[3]);
  return {
    type,
    ...(value !== undefined && { value }),
    ...(threshold !== undefined && { threshold }),
  };
}

/** One CSV row as a promptfoo test: its columns as vars, the `__` columns as promptfoo reads them. */
function testOfRow(row: Record<string, string>, at: string, warnings: string[]): JsonObject {
  const vars: JsonObject = {};
  const assert: Json[] = [];
  const test: JsonObject = {};
  const metadata: JsonObject = {};
  for (const [column, cell] of Object.entries(row)) {
    if (column.startsWith("__") && cell.trim() === "") continue;
    if (/^__expected\d*$/.test(column)) assert.push(assertionOfCell(cell));
    else if (column === "__description") test.description = cell;
    else if (column === "__threshold") test.threshold = Number(cell);
    else if (column === "__metric") test.metric = cell;
    else if (column.startsWith("__metadata:")) metadata[column.slice("__metadata:".length)] = cell;
    else if (column.startsWith("__")) warnings.push(`${at}: the column ${column} is not imported`);
    else vars[column] = cell;
  }
  if (typeof test.metric === "string") {
    for (const a of assert) if (isObject(a)) a.metric = test.metric;
    delete test.metric;
  }
  return { ...test, vars, assert, ...(Object.keys(metadata).length > 0 && { metadata }) };
}
