import type { ProviderConnection, RequestBody } from "@kiln/sdk";
import { useId } from "react";
import { Field, SelectField } from "./ui.js";

type ModelBody = NonNullable<RequestBody<"updateProviderConnection">["models"]>[number];
type Api = "" | NonNullable<ModelBody["api"]>;
/** The fields of a row the API may name in an issue (`models[i].<field>`). */
export type RowField =
  | "model"
  | "inputPerMTokUsd"
  | "outputPerMTokUsd"
  | "cachedInputPerMTokUsd"
  | "cacheWritePerMTokUsd"
  | "reasoningPerMTokUsd"
  | "api"
  | "deployment";

/** The prices beside input and output, each priced from another when absent (docs/providers.md "How usage is priced"). */
const MORE_PRICES = [
  { field: "cachedInputPerMTokUsd", row: "cached", label: "cached input price", absent: "the input price" },
  { field: "cacheWritePerMTokUsd", row: "cacheWrite", label: "cache-write price", absent: "the input price" },
  { field: "reasoningPerMTokUsd", row: "reasoning", label: "reasoning price", absent: "the output price" },
] as const;

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
  cached: string;
  cacheWrite: string;
  reasoning: string;
  /** "": the kind's default API. */
  api: Api;
  /** Azure OpenAI: the deployment the model is called through ("": the model's name). */
  deployment: string;
  kept: Omit<
    ModelBody,
    "model" | "api" | (typeof MORE_PRICES)[number]["field"] | "inputPerMTokUsd" | "outputPerMTokUsd"
  >;
}

let rowKeys = 0;
export const emptyRow = (): ModelRow => ({
  key: ++rowKeys,
  model: "",
  input: "",
  output: "",
  cached: "",
  cacheWrite: "",
  reasoning: "",
  api: "",
  deployment: "",
  kept: {},
});

const priceText = (usd: number | null) => (usd === null ? "" : String(usd));
const price = (text: string): number | undefined => (text.trim() === "" ? undefined : Number(text));

/** A connection's models as rows of the form (with its deployments, for Azure OpenAI). */
export function rowsOf(models: ProviderConnection["models"], deployments: Record<string, string> = {}): ModelRow[] {
  return models.map((m) => ({
    key: ++rowKeys,
    model: m.model,
    input: priceText(m.inputPerMTokUsd),
    output: priceText(m.outputPerMTokUsd),
    cached: priceText(m.cachedInputPerMTokUsd),
    cacheWrite: priceText(m.cacheWritePerMTokUsd),
    reasoning: priceText(m.reasoningPerMTokUsd),
    api: m.api ?? "",
    deployment: deployments[m.model] ?? "",
    kept: { capabilities: m.capabilities },
  }));
}

/**
 * The models to send (rows without a model name are left out), per row key its index among them,
 * and the deployments the rows name (Azure OpenAI: model name → deployment).
 */
export function modelsOf(
  rows: readonly ModelRow[],
  openai: boolean,
): { models: ModelBody[]; sent: Map<number, number>; deployments: Record<string, string> } {
  const sent = new Map<number, number>();
  const deployments: Record<string, string> = {};
  const models = rows
    .filter((r) => r.model.trim() !== "")
    .map((r, i): ModelBody => {
      sent.set(r.key, i);
      if (r.deployment.trim() !== "") deployments[r.model.trim()] = r.deployment.trim();
      const more: Partial<ModelBody> = {};
      for (const p of MORE_PRICES) {
        const usd = price(r[p.row]);
        if (usd !== undefined) more[p.field] = usd;
      }
      return {
        ...r.kept,
        model: r.model.trim(),
        inputPerMTokUsd: price(r.input),
        outputPerMTokUsd: price(r.output),
        ...more,
        ...(openai && r.api !== "" && { api: r.api }),
      };
    });
  return { models, sent, deployments };
}

/** The rows of models with their prices (and the API, for OpenAI-protocol kinds), each removable. */
export function ModelRows({
  rows,
  onRows,
  openai,
  azure,
  issueOf,
  edited,
}: {
  rows: ModelRow[];
  onRows: (change: (rows: ModelRow[]) => ModelRow[]) => void;
  openai: boolean;
  /** Azure OpenAI: each model names its deployment. */
  azure: boolean;
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
          azure={azure}
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
  azure,
  issue,
  set,
  onRemove,
}: {
  row: ModelRow;
  n: number;
  openai: boolean;
  azure: boolean;
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
      {azure && (
        <Field
          label={`Model ${n} deployment`}
          value={row.deployment}
          placeholder={row.model || "the model's name"}
          onChange={(deployment) => set("deployment", { deployment })}
          issue={issue("deployment")}
        />
      )}
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
      <details className="more-prices" open={MORE_PRICES.some((p) => row[p.row] !== "")}>
        <summary>Model {n}: cached, cache-write and reasoning prices</summary>
        <div className="more-prices-fields">
          {MORE_PRICES.map((p) => (
            <Field
              key={p.field}
              label={`Model ${n} ${p.label}`}
              value={row[p.row]}
              placeholder={`as ${p.absent}`}
              onChange={(v) => set(p.field, { [p.row]: v })}
              issue={issue(p.field)}
            />
          ))}
        </div>
      </details>
    </div>
  );
}
