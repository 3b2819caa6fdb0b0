import type { Budget, RequestBody } from "@kiln/sdk";
import { useCallback, useId, useState } from "react";
import { useAction, useLoaded } from "./action.js";
import { call } from "./api.js";
import { ConfirmButton } from "./confirm.js";
import { dollars } from "./model-picker.js";
import { Listed } from "./resource-list.js";
import { DataTable, ErrorBox, Field, SelectField } from "./ui.js";

type Body = RequestBody<"createBudget">;
type ScopeType = Body["scope"]["type"];
const SCOPES: Record<ScopeType, string> = {
  organization: "The whole organization",
  api_key: "One API key",
  prompt: "One prompt",
  connection: "One provider connection",
};
/** Where each scope's ids are listed, to choose one by name. */
const LISTS: Partial<Record<ScopeType, string>> = {
  api_key: "/api/api-keys",
  prompt: "/api/prompts",
  connection: "/api/provider-connections",
};
const ID_FIELD = { api_key: "apiKeyId", prompt: "promptId", connection: "connectionId" } as const;
/** The id prefix of each scope's resources (api.md "Conventions"). */
const PREFIX = { api_key: "key_", prompt: "prm_", connection: "pcn_" } as const;

const scopeText = (b: Budget, names: Map<string, string>) => {
  if (b.scope.type === "organization") return "the organization";
  const id = b.scope[ID_FIELD[b.scope.type]] ?? "";
  const kind = { api_key: "API key", prompt: "prompt", connection: "connection" }[b.scope.type];
  return `${kind} ${names.get(id) ?? id}`;
};

/** The names of the keys, prompts and connections a budget may be scoped to (the first 200 of each). */
async function readNames(organizationId: string): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  await Promise.all(
    Object.values(LISTS).map((path) =>
      call<{ data: { id: string; name: string }[] }>("GET", `${path}?organizationId=${organizationId}&limit=200`).then(
        (page) => {
          for (const r of page.data) names.set(r.id, r.name);
        },
        () => undefined,
      ),
    ),
  );
  return names;
}

/**
 * The organization's budgets (docs/budgets.md) on the Usage page: each one's spend in its current
 * period against its limit (a meter), what it does at the line, deleted after a question; a form
 * sets one (admins; others are told the API's refusal).
 */
export function Budgets({ organizationId }: { organizationId: string }) {
  const { error, setError, act } = useAction();
  const read = useCallback(async () => {
    const [page, names] = await Promise.all([
      call<{ data: Budget[] }>("GET", `/api/budgets?organizationId=${organizationId}&limit=100`),
      readNames(organizationId),
    ]);
    return { budgets: page.data, names };
  }, [organizationId]);
  const { value, reload } = useLoaded(read, setError);
  const remove = async (b: Budget) => {
    await call("DELETE", `/api/budgets/${b.id}`);
    reload();
  };
  return (
    <section aria-labelledby="budgets">
      <h2 id="budgets">Budgets</h2>
      <ErrorBox error={error} />
      <Listed items={value?.budgets ?? null} what="budgets" empty="No budget yet: set one below.">
        {(budgets) => (
          <DataTable label="Budget list" columns={["Budget", "Limits", "Spent this period", "At the line", ""]}>
            {budgets.map((b) => (
              <tr key={b.id}>
                <td>{b.name}</td>
                <td>
                  {dollars(b.limitUsd)} a {b.period} on {scopeText(b, value?.names ?? new Map())}
                </td>
                <td>
                  <meter
                    aria-label={`${b.name}: spent of its limit`}
                    min={0}
                    max={b.limitUsd}
                    high={b.limitUsd * 0.8}
                    optimum={0}
                    value={Math.min(b.spentUsd, b.limitUsd)}
                  />
                  <span className="hint">
                    {" "}
                    {dollars(b.spentUsd)} of {dollars(b.limitUsd)}
                  </span>
                </td>
                <td>
                  {b.action === "block"
                    ? "runs refused"
                    : `alerts at ${b.alertAt.map((a) => `${a * 100}%`).join(", ")}`}
                </td>
                <td>
                  <ConfirmButton
                    act={act}
                    run={() => remove(b)}
                    className="secondary"
                    question={`Delete the budget ${b.name}? Its scope's runs are no longer limited by it.`}
                    confirmLabel={`Yes, delete ${b.name}`}
                    danger
                  >
                    Delete {b.name}
                  </ConfirmButton>
                </td>
              </tr>
            ))}
          </DataTable>
        )}
      </Listed>
      <NewBudget organizationId={organizationId} names={value?.names ?? new Map()} onCreated={reload} />
    </section>
  );
}

function NewBudget({
  organizationId,
  names,
  onCreated,
}: {
  organizationId: string;
  names: Map<string, string>;
  onCreated: () => void;
}) {
  const id = useId();
  const { error, submit, edited } = useAction();
  const [name, setName] = useState("");
  const [limit, setLimit] = useState("");
  const [period, setPeriod] = useState<Body["period"]>("month");
  const [action, setAction] = useState<Body["action"]>("block");
  const [scopeType, setScopeType] = useState<ScopeType>("organization");
  const [scopeId, setScopeId] = useState("");
  const create = submit(async () => {
    const scope =
      scopeType === "organization" ? { type: scopeType } : { type: scopeType, [ID_FIELD[scopeType]]: scopeId };
    const body: Body = { organizationId, name, scope, limitUsd: Number(limit), period, action };
    await call("POST", "/api/budgets", body);
    setName("");
    setLimit("");
    onCreated();
  });
  return (
    <form className="card" onSubmit={create} noValidate aria-labelledby={`${id}-title`}>
      <h3 id={`${id}-title`}>Set a budget</h3>
      <Field
        label="Budget name"
        value={name}
        onChange={(v) => {
          setName(v);
          edited("name");
        }}
        issue={error?.fields.name}
        required
      />
      <Field label="Limit (USD)" type="number" value={limit} onChange={setLimit} issue={error?.fields.limitUsd} />
      <SelectField id={`${id}-period`} label="Per" value={period} onChange={(v) => setPeriod(v as Body["period"])}>
        <option value="month">UTC month</option>
        <option value="day">UTC day</option>
      </SelectField>
      <SelectField id={`${id}-scope`} label="On" value={scopeType} onChange={(v) => setScopeType(v as ScopeType)}>
        {Object.entries(SCOPES).map(([value, label]) => (
          <option key={value} value={value}>
            {label}
          </option>
        ))}
      </SelectField>
      {scopeType !== "organization" && (
        <SelectField id={`${id}-scope-id`} label={SCOPES[scopeType]} value={scopeId} onChange={setScopeId}>
          <option value="">(choose)</option>
          {[...names]
            .filter(([value]) => value.startsWith(PREFIX[scopeType]))
            .map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
        </SelectField>
      )}
      <SelectField
        id={`${id}-action`}
        label="At the line"
        value={action}
        onChange={(v) => setAction(v as Body["action"])}
      >
        <option value="block">Refuse the scope's runs (429)</option>
        <option value="alert">Only alert (webhook budget.threshold_reached)</option>
      </SelectField>
      <ErrorBox error={error} shownFields={["name", "limitUsd"]} />
      <button type="submit">Set budget</button>
    </form>
  );
}
