/** The assertions of a case as a form: one row per assertion, its type choosing the fields it takes. */
import type { Assertion } from "@kiln/sdk";
import { Field, SelectField } from "./ui.js";

type Kind = "text" | "number" | "json" | "value";
interface Part {
  key: string;
  label: string;
  kind: Kind;
  optional?: boolean;
}

/** The fields of each type (api.md "Evaluations"); `value` reads as JSON when it parses, else as text. */
const PARTS: Record<Assertion["type"], Part[]> = {
  contains: [{ key: "value", label: "Text the output contains", kind: "text" }],
  equals: [{ key: "value", label: "The output equals (text or JSON)", kind: "value" }],
  regex: [
    { key: "pattern", label: "Pattern (RE2)", kind: "text" },
    { key: "flags", label: "Flags", kind: "text", optional: true },
  ],
  json_schema: [{ key: "schema", label: "JSON Schema of the output", kind: "json" }],
  json_path: [
    { key: "path", label: "JSONPath, e.g. $.summary", kind: "text" },
    { key: "equals", label: "Equals (text or JSON)", kind: "value" },
  ],
  max_latency_ms: [{ key: "value", label: "At most (ms)", kind: "number" }],
  max_cost_usd: [{ key: "value", label: "At most (USD)", kind: "number" }],
  llm_judge: [
    { key: "rubric", label: "Rubric: what a passing output does", kind: "text" },
    { key: "threshold", label: "Passing score (0 to 1, default 0.5)", kind: "number", optional: true },
    { key: "model", label: "Judge model (default: the deployment's)", kind: "text", optional: true },
  ],
};

export const ASSERTION_TYPES = Object.keys(PARTS) as Assertion["type"][];

/** An assertion being edited: its type and each field's text. */
export interface AssertionDraft {
  type: Assertion["type"];
  fields: Record<string, string>;
}

const textOf = (v: unknown) => (v === undefined ? "" : typeof v === "string" ? v : JSON.stringify(v, null, 1));

export function draftOf(a: Assertion): AssertionDraft {
  const record = a as unknown as Record<string, unknown>;
  return { type: a.type, fields: Object.fromEntries(PARTS[a.type].map((p) => [p.key, textOf(record[p.key])])) };
}

function partValue(part: Part, text: string, where: string): unknown {
  if (part.kind === "text") return text;
  if (part.kind === "number") {
    const n = Number(text);
    if (text.trim() === "" || Number.isNaN(n)) throw { message: `${where} must be a number`, fields: {} };
    return n;
  }
  try {
    return JSON.parse(text);
  } catch {
    if (part.kind === "json") throw { message: `${where} is not JSON`, fields: {} };
    return text;
  }
}

/** The assertions the API takes; an empty optional field is left out, an empty required one refused. */
export function assertionsOf(drafts: AssertionDraft[]): Assertion[] {
  return drafts.map((d, i) => {
    const out: Record<string, unknown> = { type: d.type };
    for (const p of PARTS[d.type]) {
      const text = d.fields[p.key] ?? "";
      const where = `Assertion ${i + 1} (${d.type}): ${p.label.toLowerCase()}`;
      if (text.trim() === "") {
        if (p.optional) continue;
        throw { message: `${where} is required`, fields: {} };
      }
      out[p.key] = partValue(p, text, where);
    }
    return out as unknown as Assertion;
  });
}

/** The assertion rows, each with its remove button, and a button adding one. */
export function AssertionsEditor({
  drafts,
  onChange,
}: {
  drafts: AssertionDraft[];
  onChange: (drafts: AssertionDraft[]) => void;
}) {
  const set = (i: number, d: AssertionDraft) => onChange(drafts.map((x, j) => (j === i ? d : x)));
  return (
    <fieldset className="assertions">
      <legend>Assertions</legend>
      {drafts.length === 0 && <p className="hint">None: the expected output, if given, must equal the output.</p>}
      {drafts.map((d, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: rows have no identity but their place
        <div className="assertion-row" key={i}>
          <SelectField
            id={`assertion-${i}-type`}
            label={`Assertion ${i + 1} type`}
            value={d.type}
            onChange={(t) => set(i, { type: t as Assertion["type"], fields: {} })}
          >
            {ASSERTION_TYPES.map((t) => (
              <option key={t} value={t}>
                {t.replace(/_/g, " ")}
              </option>
            ))}
          </SelectField>
          {PARTS[d.type].map((p) => (
            <Field
              key={p.key}
              label={`${p.label}${p.optional ? " (optional)" : ""}`}
              multiline={p.kind === "json"}
              rows={3}
              type={p.kind === "number" ? "number" : "text"}
              value={d.fields[p.key] ?? ""}
              onChange={(v) => set(i, { ...d, fields: { ...d.fields, [p.key]: v } })}
            />
          ))}
          <button type="button" className="secondary" onClick={() => onChange(drafts.filter((_, j) => j !== i))}>
            Remove assertion {i + 1}
          </button>
        </div>
      ))}
      <button
        type="button"
        className="secondary"
        onClick={() => onChange([...drafts, { type: "contains", fields: {} }])}
      >
        Add an assertion
      </button>
    </fieldset>
  );
}
