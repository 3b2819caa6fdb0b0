/**
 * Evaluation cases as files: read from JSON (an array), JSONL (one case a line) or CSV, and written
 * as JSONL (every field kept) or CSV (name, input.<field>…, expectedOutput, contains).
 */
import type { EvaluationCase, NewEvaluationCase } from "@kiln/sdk";
import Papa from "papaparse";

const CSV_FIELDS = ["name", "expectedOutput", "contains"];

function objectCase(value: unknown, where: string): NewEvaluationCase {
  if (!value || typeof value !== "object" || Array.isArray(value)) throw new Error(`${where}: a case is an object`);
  const c = value as NewEvaluationCase;
  if (!c.input || typeof c.input !== "object") throw new Error(`${where}: "input" must be an object`);
  const { name, input, expectedOutput, assertions } = c;
  return {
    ...(name ? { name } : {}),
    input,
    ...(expectedOutput === undefined || expectedOutput === null ? {} : { expectedOutput }),
    ...(assertions && assertions.length > 0 ? { assertions } : {}),
  };
}

/** A CSV cell as the value it spells: JSON when it parses as JSON, else the text. */
function cellValue(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * Cases from a JSON array, JSONL (one object a line), or CSV with a header row: `input.<field>`
 * columns make the input, `name`, `expectedOutput` and `contains` (an assertion) are those; any
 * other column is refused. Each problem names its line or row.
 */
export function casesOf(text: string): NewEvaluationCase[] {
  const trimmed = text.trim();
  if (trimmed === "") throw new Error("the file holds no case");
  if (trimmed.startsWith("[")) {
    const parsed: unknown = JSON.parse(trimmed);
    if (!Array.isArray(parsed)) throw new Error("a JSON array of cases is expected");
    return parsed.map((c, i) => objectCase(c, `case ${i + 1}`));
  }
  if (trimmed.startsWith("{")) {
    return trimmed
      .split(/\r?\n/)
      .map((line, i) => ({ line: line.trim(), n: i + 1 }))
      .filter(({ line }) => line !== "")
      .map(({ line, n }) => {
        let parsed: unknown;
        try {
          parsed = JSON.parse(line);
        } catch {
          throw new Error(`line ${n} is not JSON`);
        }
        return objectCase(parsed, `line ${n}`);
      });
  }
  const csv = Papa.parse<Record<string, string>>(trimmed, { header: true, skipEmptyLines: true });
  if (csv.errors.length > 0) throw new Error(`CSV row ${(csv.errors[0]?.row ?? 0) + 1}: ${csv.errors[0]?.message}`);
  const unknown = (csv.meta.fields ?? []).filter((f) => !f.startsWith("input.") && !CSV_FIELDS.includes(f));
  if (unknown.length > 0) throw new Error(`unknown CSV columns: ${unknown.join(", ")} (use input.<field>)`);
  return csv.data.map((row) => {
    const { name, expectedOutput, contains } = row;
    const input = Object.fromEntries(
      Object.entries(row).flatMap(([k, v]) => (k.startsWith("input.") ? [[k.slice("input.".length), v]] : [])),
    );
    return {
      ...(name ? { name } : {}),
      input,
      ...(expectedOutput ? { expectedOutput: cellValue(expectedOutput) } : {}),
      ...(contains ? { assertions: [{ type: "contains" as const, value: contains }] } : {}),
    };
  });
}

/** One case a line, as `casesOf` reads it back: name, input, expectedOutput (when set), assertions. */
export function casesToJsonl(cases: EvaluationCase[]): string {
  return cases
    .map((c) =>
      JSON.stringify({
        name: c.name,
        input: c.input,
        ...(c.expectedOutput === null ? {} : { expectedOutput: c.expectedOutput }),
        assertions: c.assertions,
      }),
    )
    .join("\n")
    .concat("\n");
}

/**
 * CSV for a spreadsheet: name, one `input.<field>` column per input field, expectedOutput, and the
 * first `contains` assertion (other assertions do not fit a cell: export JSONL to keep them).
 */
export function casesToCsv(cases: EvaluationCase[]): string {
  const inputFields = [...new Set(cases.flatMap((c) => Object.keys(c.input as Record<string, unknown>)))];
  const text = (v: unknown) => (v === undefined || v === null ? "" : typeof v === "string" ? v : JSON.stringify(v));
  const rows = cases.map((c) => {
    const input = c.input as Record<string, unknown>;
    const contains = c.assertions.find((a) => a.type === "contains");
    return [
      c.name,
      ...inputFields.map((f) => text(input[f])),
      text(c.expectedOutput),
      contains && "value" in contains ? String(contains.value) : "",
    ];
  });
  return `${Papa.unparse({ fields: ["name", ...inputFields.map((f) => `input.${f}`), "expectedOutput", "contains"], data: rows })}\n`;
}

/** Offers `text` as a file download named `name`. */
export function download(name: string, text: string, type: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  a.click();
  URL.revokeObjectURL(url);
}
