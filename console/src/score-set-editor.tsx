import type { ScoreConfig } from "@kiln/sdk";
import { useId } from "react";

/** One score of a queue's set as the form edits it: options as comma-separated text, bounds as text. */
export interface ScoreRow {
  name: string;
  kind: ScoreConfig["kind"];
  min: string;
  max: string;
  options: string;
  required: boolean;
}

export const NEW_SCORE: ScoreRow = { name: "", kind: "boolean", min: "1", max: "5", options: "", required: false };

const ROW_FIELDS = ["name", "kind", "min", "max", "options"];

/** The fields of the rows' issues the editor shows beside them (an ErrorBox leaves them out). */
export const scoreFieldsOf = (rows: ScoreRow[]) =>
  rows.flatMap((_, i) => ROW_FIELDS.map((k) => `scoreConfigs[${i}].${k}`));

/** The rows as the API takes them (docs/review.md "Scores"); the API names what is wrong. */
export function scoreConfigsOf(rows: ScoreRow[]): ScoreConfig[] {
  return rows.map((r) => ({
    name: r.name.trim(),
    kind: r.kind,
    required: r.required,
    ...(r.kind === "numeric" && { min: Number(r.min), max: Number(r.max) }),
    ...(r.kind === "categorical" && {
      options: r.options
        .split(",")
        .map((o) => o.trim())
        .filter(Boolean),
    }),
  }));
}

/** The score set of a queue: a row per score (name, kind, bounds or options, required), added and removed. */
export function ScoreSetEditor({
  rows,
  onChange,
  issues,
}: {
  rows: ScoreRow[];
  onChange: (rows: ScoreRow[]) => void;
  issues: Record<string, string>;
}) {
  const id = useId();
  const set = (i: number, change: Partial<ScoreRow>) =>
    onChange(rows.map((r, j) => (j === i ? { ...r, ...change } : r)));
  return (
    <fieldset className="score-set">
      <legend>Scores reviewers give</legend>
      {rows.length === 0 && <p className="empty">No score yet: reviewers only comment.</p>}
      {rows.map((r, i) => {
        const at = `scoreConfigs[${i}]`;
        const issue = ROW_FIELDS.map((k) => issues[`${at}.${k}`])
          .filter(Boolean)
          .join("; ");
        const f = `${id}-${i}`;
        return (
          // biome-ignore lint/suspicious/noArrayIndexKey: rows are edited in place, in order
          <div key={i} className="score-row">
            <label htmlFor={`${f}-name`}>Score {i + 1} name</label>
            <input id={`${f}-name`} value={r.name} onChange={(e) => set(i, { name: e.target.value })} />
            <label htmlFor={`${f}-kind`}>Kind</label>
            <select
              id={`${f}-kind`}
              value={r.kind}
              onChange={(e) => set(i, { kind: e.target.value as ScoreRow["kind"] })}
            >
              <option value="boolean">yes / no</option>
              <option value="numeric">number</option>
              <option value="categorical">one of options</option>
            </select>
            {r.kind === "numeric" && (
              <>
                <label htmlFor={`${f}-min`}>From</label>
                <input id={`${f}-min`} type="number" value={r.min} onChange={(e) => set(i, { min: e.target.value })} />
                <label htmlFor={`${f}-max`}>To</label>
                <input id={`${f}-max`} type="number" value={r.max} onChange={(e) => set(i, { max: e.target.value })} />
              </>
            )}
            {r.kind === "categorical" && (
              <>
                <label htmlFor={`${f}-options`}>Options (comma-separated)</label>
                <input id={`${f}-options`} value={r.options} onChange={(e) => set(i, { options: e.target.value })} />
              </>
            )}
            <label className="check">
              <input type="checkbox" checked={r.required} onChange={(e) => set(i, { required: e.target.checked })} />{" "}
              required
            </label>
            <button type="button" className="secondary" onClick={() => onChange(rows.filter((_, j) => j !== i))}>
              Remove score {i + 1}
            </button>
            {issue && <span className="issue">{issue}</span>}
          </div>
        );
      })}
      <button type="button" className="secondary" onClick={() => onChange([...rows, NEW_SCORE])}>
        Add score
      </button>
    </fieldset>
  );
}
