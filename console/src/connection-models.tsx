import type { ProviderConnection, RequestBody } from "@kiln/sdk";
import { useId } from "react";
import { Field, SelectField } from "./ui.js";

type ModelBody = NonNullable<RequestBody<"updateProviderConnection">["models"]>[number];
type Api = "" | NonNullable<ModelBody["api"]>;
/** The fields of a row the API may name in an issue (`models[i].<field>`). */
export type RowField = "model" | "inputPerMTokUsd" | "outputPerMTokUsd" | "api";

/**
 * One row of the models a connection offers, as typed (docs/providers.md "Connections"): the
 * prices are text until sent; `kept` holds what the form does not show of a model it was given
 * (its other prices, its capabilities), sent back as it was, so an edit changes only what it shows.
 */
export interface ModelRow {
  /** Stable across edits and removals (React's key, and which row an issue of the API is about). */
  key: number;
  model: string;
  input: string;
  output: string;
  /** "": the kind's default API. */
  api: Api;
  kept: Omit<ModelBody, "model" | "inputPerMTokUsd" | "outputPerMTokUsd" | "api">;
}

let rowKeys = 0;
export const emptyRow = (): ModelRow => ({ key: ++rowKeys, model: "", input: "", output: "", api: "", kept: {} });

const priceText = (usd: number | null) => (usd === null ? "" : String(usd));
const price = (text: string): number | undefined => (text.trim() === "" ? undefined : Number(text));

/** A connection's models as rows of the form. */
export function rowsOf(models: ProviderConnection["models"]): ModelRow[] {
  return models.map((m) => ({
    key: ++rowKeys,
    model: m.model,
    input: priceText(m.inputPerMTokUsd),
    output: priceText(m.outputPerMTokUsd),
    api: m.api ?? "",
    kept: {
      ...(m.cachedInputPerMTokUsd !== null && { cachedInputPerMTokUsd: m.cachedInputPerMTokUsd }),
      ...(m.cacheWritePerMTokUsd !== null && { cacheWritePerMTokUsd: m.cacheWritePerMTokUsd }),
      ...(m.reasoningPerMTokUsd !== null && { reasoningPerMTokUsd: m.reasoningPerMTokUsd }),
      capabilities: m.capabilities,
    },
  }));
}

/** The models to send (rows without a model name are left out) and, per row key, its index among them. */
export function modelsOf(
  rows: readonly ModelRow[],
  openai: boolean,
): { models: ModelBody[]; sent: Map<number, number> } {
  const sent = new Map<number, number>();
  const models = rows
    .filter((r) => r.model.trim() !== "")
    .map((r, i): ModelBody => {
      sent.set(r.key, i);
      return {
        ...r.kept,
        model: r.model.trim(),
        inputPerMTokUsd: price(r.input),
        outputPerMTokUsd: price(r.output),
        ...(openai && r.api !== "" && { api: r.api }),
      };
    });
  return { models, sent };
}

/** The rows of models with their prices (and the API, for OpenAI-protocol kinds), each removable. */
export function ModelRows({
  rows,
  onRows,
  openai,
  issueOf,
  edited,
}: {
  rows: ModelRow[];
  onRows: (change: (rows: ModelRow[]) => ModelRow[]) => void;
  openai: boolean;
  issueOf: (row: ModelRow, field: RowField) => string | undefined;
  edited: (row: ModelRow, field: RowField) => void;
}) {
  const set = (row: ModelRow, field: RowField, change: Partial<ModelRow>) => {
    onRows((all) => all.map((r) => (r.key === row.key ? { ...r, ...change } : r)));
    edited(row, field);
  };
  return (
    <>
      {rows.map((r, i) => (
        <ModelRowFields
          key={r.key}
          row={r}
          n={i + 1}
          openai={openai}
          issue={(field) => issueOf(r, field)}
          set={(field, change) => set(r, field, change)}
          onRemove={() => onRows((all) => all.filter((x) => x.key !== r.key))}
        />
      ))}
      <button type="button" className="secondary" onClick={() => onRows((all) => [...all, emptyRow()])}>
        Add a model
      </button>
    </>
  );
}

function ModelRowFields({
  row,
  n,
  openai,
  issue,
  set,
  onRemove,
}: {
  row: ModelRow;
  n: number;
  openai: boolean;
  issue: (field: RowField) => string | undefined;
  set: (field: RowField, change: Partial<ModelRow>) => void;
  onRemove: () => void;
}) {
  const id = useId();
  return (
    <div className="price-row">
      <Field
        label={`Model ${n}`}
        value={row.model}
        onChange={(model) => set("model", { model })}
        issue={issue("model")}
      />
      <Field
        label={`Model ${n} input price`}
        value={row.input}
        onChange={(input) => set("inputPerMTokUsd", { input })}
        issue={issue("inputPerMTokUsd")}
      />
      <Field
        label={`Model ${n} output price`}
        value={row.output}
        onChange={(output) => set("outputPerMTokUsd", { output })}
        issue={issue("outputPerMTokUsd")}
      />
      {openai && (
        <SelectField
          id={`${id}-api`}
          label={`Model ${n} API`}
          value={row.api}
          onChange={(v) => set("api", { api: v as Api })}
        >
          <option value="">default</option>
          <option value="chat_completions">Chat Completions</option>
          <option value="responses">Responses</option>
        </SelectField>
      )}
      <button type="button" className="secondary" onClick={onRemove}>
        Remove model {n}
      </button>
    </div>
  );
}
