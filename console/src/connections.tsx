import type { ProviderConnection, ProviderConnectionTest } from "@kiln/sdk";
import { useCallback, useState } from "react";
import { useAction, useLoaded } from "./action.js";
import { call } from "./api.js";
import { ConfirmButton } from "./confirm.js";
import { ConnectionForm } from "./connection-form.js";
import { PROVIDERS, speaksOpenAI } from "./connection-kinds.js";
import { modelsOf, rowsOf } from "./connection-models.js";
import { perMillion } from "./model-picker.js";
import { Listed } from "./resource-list.js";
import { DataTable, ErrorBox } from "./ui.js";

/**
 * The organization's provider connections (docs/providers.md "Connections"): each with its kind,
 * endpoint, key hint and models; tested with one cheap call, edited in place in the connection
 * form, deleted after a question; the same form adds one. The key goes in and is never shown again
 * (only its last four characters).
 */
export function Connections({ organizationId, onChanged }: { organizationId: string; onChanged: () => void }) {
  const { error, setError, act } = useAction();
  const read = useCallback(
    async () =>
      (await call<{ data: ProviderConnection[] }>("GET", `/api/provider-connections?organizationId=${organizationId}`))
        .data,
    [organizationId],
  );
  const { value: connections, reload } = useLoaded(read, setError);
  const [tests, setTests] = useState<Record<string, ProviderConnectionTest>>({});
  const [editing, setEditing] = useState<ProviderConnection | null>(null);
  const changed = () => {
    reload();
    onChanged();
  };
  const test = async (c: ProviderConnection) => {
    const outcome = await call<ProviderConnectionTest>("POST", `/api/provider-connections/${c.id}/test`);
    setTests((t) => ({ ...t, [c.id]: outcome }));
  };
  /** The models the provider listed and the connection lacks, added (unpriced until given prices). */
  const addListed = async (c: ProviderConnection, listed: string[]) => {
    const known = new Set(c.models.map((m) => m.model));
    const { models } = modelsOf(rowsOf(c.models), speaksOpenAI(c.provider));
    await call("PATCH", `/api/provider-connections/${c.id}`, {
      models: [...models, ...listed.filter((m) => !known.has(m)).map((model) => ({ model }))],
    });
    changed();
  };
  const remove = async (c: ProviderConnection) => {
    await call("DELETE", `/api/provider-connections/${c.id}`);
    changed();
  };
  return (
    <section aria-labelledby="connections">
      <h2 id="connections">Connections</h2>
      <p className="hint">
        Your organization's own providers and keys. Their models are named <code>connection/model</code> and only your
        organization sees them.
      </p>
      <ErrorBox error={error} />
      <Listed items={connections} what="connections" empty="No connection yet: add one below.">
        {(list) => (
          <DataTable label="Provider connections" columns={["Name", "Provider", "Endpoint", "Key", "Models", "Check"]}>
            {list.map((c) => (
              <tr key={c.id}>
                <td>{c.name}</td>
                <td>{PROVIDERS[c.provider]}</td>
                <td className="wrap">{c.baseUrl ?? "the provider's"}</td>
                <td>{c.apiKeyHint ?? (c.hasSecretAccessKey ? "secret access key" : "none")}</td>
                <td>
                  {c.models.length === 0
                    ? "none listed"
                    : c.models.map((m) => (
                        <span key={m.id} className="chip" title={`${perMillion(m.inputPerMTokUsd)} in`}>
                          {m.id}
                        </span>
                      ))}
                </td>
                <td>
                  <div className="actions">
                    <button type="button" className="secondary" onClick={() => act(() => test(c))}>
                      Test {c.name}
                    </button>
                    <button type="button" className="secondary" onClick={() => setEditing(c)}>
                      Edit {c.name}
                    </button>
                    <ConfirmButton
                      act={act}
                      run={() => remove(c)}
                      className="secondary"
                      question={`Delete ${c.name}? Versions and routes naming its models fail to run from now on.`}
                      confirmLabel={`Yes, delete ${c.name}`}
                      danger
                    >
                      Delete {c.name}
                    </ConfirmButton>
                  </div>
                  <TestOutcome
                    outcome={tests[c.id]}
                    missing={(tests[c.id]?.models ?? []).filter((m) => !c.models.some((x) => x.model === m))}
                    onAdd={(listed) => act(() => addListed(c, listed))}
                  />
                </td>
              </tr>
            ))}
          </DataTable>
        )}
      </Listed>
      {editing && (
        <ConnectionForm
          key={editing.id}
          organizationId={organizationId}
          connection={editing}
          onSaved={() => {
            setEditing(null);
            changed();
          }}
          onCancel={() => setEditing(null)}
        />
      )}
      <ConnectionForm organizationId={organizationId} onSaved={changed} />
    </section>
  );
}

/** What a connection's test answered: reachable (with what it lists) or the provider's error. */
function TestOutcome({
  outcome,
  missing,
  onAdd,
}: {
  outcome: ProviderConnectionTest | undefined;
  missing: string[];
  onAdd: (models: string[]) => void;
}) {
  if (!outcome) return null;
  return (
    <>
      <p role="status" className={outcome.ok ? "hint" : "issue"}>
        {outcome.ok
          ? `Reachable in ${outcome.latencyMs} ms${outcome.models ? `; it lists ${outcome.models.length} models` : ""}.`
          : `Failed after ${outcome.latencyMs} ms: ${outcome.error?.message ?? "no answer"} (${outcome.error?.code ?? "error"}).`}
      </p>
      {outcome.ok && missing.length > 0 && (
        <button type="button" className="secondary" onClick={() => onAdd(missing)}>
          Add the {missing.length} listed model{missing.length === 1 ? "" : "s"} it lacks
        </button>
      )}
    </>
  );
}
