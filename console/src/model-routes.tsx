import type { Model, ModelRoute, RequestBody } from "@kiln/sdk";
import { useCallback, useId, useState } from "react";
import { useAction, useLoaded } from "./action.js";
import { call } from "./api.js";
import { ConfirmButton } from "./confirm.js";
import { Listed } from "./resource-list.js";
import { DataTable, ErrorBox, Field, SelectField } from "./ui.js";

type Strategy = RequestBody<"createModelRoute">["strategy"];
const STRATEGIES: Record<Strategy, string> = {
  fallback: "Fallback: the next target after a retryable failure",
  weighted: "Weighted: runs spread by weight",
};

interface TargetRow {
  /** Stable across edits (React's key). */
  key: number;
  model: string;
  weight: string;
}

let rowKeys = 0;
const emptyRow = (): TargetRow => ({ key: ++rowKeys, model: "", weight: "1" });

/** The routes of an organization (docs/providers.md "Routes"), as the picker names them. */
export const routeModelIds = (routes: ModelRoute[]) => routes.map((r) => `route/${r.name}`);

/** Reads the organization's routes (every page a person would keep: the first 100). */
export async function readRoutes(organizationId: string): Promise<ModelRoute[]> {
  return (await call<{ data: ModelRoute[] }>("GET", `/api/model-routes?organizationId=${organizationId}&limit=100`))
    .data;
}

/**
 * The organization's model routes: a name that runs as `route/<name>`, its strategy and targets;
 * built from the models the organization can run, deleted after a question.
 */
export function ModelRoutes({
  organizationId,
  models,
  onChanged,
}: {
  organizationId: string;
  models: Model[];
  onChanged: () => void;
}) {
  const { error, setError, act } = useAction();
  const read = useCallback(() => readRoutes(organizationId), [organizationId]);
  const { value: routes, reload } = useLoaded(read, setError);
  const changed = () => {
    reload();
    onChanged();
  };
  const remove = async (r: ModelRoute) => {
    await call("DELETE", `/api/model-routes/${r.id}`);
    changed();
  };
  return (
    <section aria-labelledby="routes">
      <h2 id="routes">Routes</h2>
      <p className="hint">
        A route is a model name, <code>route/name</code>, that tries its targets in order (fallback) or spreads runs by
        weight; a version or a run names it like any model.
      </p>
      <ErrorBox error={error} />
      <Listed items={routes} what="routes" empty="No route yet: build one below.">
        {(list) => (
          <DataTable label="Model routes" columns={["Model name", "Strategy", "Targets", ""]}>
            {list.map((r) => (
              <tr key={r.id}>
                <td className="nowrap">route/{r.name}</td>
                <td>{r.strategy}</td>
                <td>
                  {r.targets.map((t, i) => (
                    <span key={t.model} className="chip">
                      {i + 1}. {t.model}
                      {r.strategy === "weighted" ? ` × ${t.weight ?? 1}` : ""}
                    </span>
                  ))}
                </td>
                <td>
                  <ConfirmButton
                    act={act}
                    run={() => remove(r)}
                    className="secondary"
                    question={`Delete route/${r.name}? Versions naming it fail to run from now on.`}
                    confirmLabel={`Yes, delete route/${r.name}`}
                    danger
                  >
                    Delete route/{r.name}
                  </ConfirmButton>
                </td>
              </tr>
            ))}
          </DataTable>
        )}
      </Listed>
      <NewRoute organizationId={organizationId} models={models} onCreated={changed} />
    </section>
  );
}

function NewRoute({
  organizationId,
  models,
  onCreated,
}: {
  organizationId: string;
  models: Model[];
  onCreated: () => void;
}) {
  const id = useId();
  const { error, submit, edited } = useAction();
  const [name, setName] = useState("");
  const [strategy, setStrategy] = useState<Strategy>("fallback");
  const [rows, setRows] = useState<TargetRow[]>(() => [emptyRow(), emptyRow()]);
  const runnable = models.filter((m) => m.available);
  const create = submit(async () => {
    const targets = rows
      .filter((r) => r.model !== "")
      .map((r) => (strategy === "weighted" ? { model: r.model, weight: Number(r.weight) } : { model: r.model }));
    const body: RequestBody<"createModelRoute"> = { organizationId, name, strategy, targets };
    await call("POST", "/api/model-routes", body);
    setName("");
    setRows([emptyRow(), emptyRow()]);
    onCreated();
  });
  const setRow = (at: number, change: Partial<TargetRow>) =>
    setRows((all) => all.map((r, i) => (i === at ? { ...r, ...change } : r)));
  return (
    <form className="card" onSubmit={create} noValidate aria-labelledby={`${id}-title`}>
      <h3 id={`${id}-title`}>Build a route</h3>
      <Field
        label="Route name"
        value={name}
        onChange={(v) => {
          setName(v);
          edited("name");
        }}
        issue={error?.fields.name}
        required
      />
      <SelectField id={`${id}-strategy`} label="Strategy" value={strategy} onChange={(v) => setStrategy(v as Strategy)}>
        {Object.entries(STRATEGIES).map(([value, label]) => (
          <option key={value} value={value}>
            {label}
          </option>
        ))}
      </SelectField>
      <fieldset>
        <legend>Targets, in order</legend>
        {rows.map((r, i) => (
          <div className="target-row" key={r.key}>
            <SelectField
              id={`${id}-target-${i}`}
              label={`Target ${i + 1}`}
              value={r.model}
              onChange={(model) => setRow(i, { model })}
            >
              <option value="">(none)</option>
              {runnable.map((m) => (
                <option key={m.id} value={m.id}>
                  {m.id}
                </option>
              ))}
            </SelectField>
            {strategy === "weighted" && (
              <Field
                label={`Target ${i + 1} weight`}
                type="number"
                value={r.weight}
                onChange={(weight) => setRow(i, { weight })}
              />
            )}
          </div>
        ))}
        {rows.length < 8 && (
          <button type="button" className="secondary" onClick={() => setRows((all) => [...all, emptyRow()])}>
            Add a target
          </button>
        )}
      </fieldset>
      <ErrorBox error={error} shownFields={["name"]} />
      <button type="submit">Create route</button>
    </form>
  );
}
