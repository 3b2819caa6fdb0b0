import type { ApiKey, RequestBody } from "@kiln/sdk";
import { type FormEvent, useCallback, useEffect, useState } from "react";
import { call, errorOf, type Session, type ShownError } from "./api.js";
import { DataTable, Empty, ErrorBox, Field, Loading } from "./ui.js";

/**
 * The key scopes, checked against the API's document both ways: a scope the API adds or drops
 * fails to compile here (a Record over the scope union needs every key, and only those).
 */
type Scope = RequestBody<"createApiKey">["scopes"][number];
const SCOPE_SET: Record<Scope, true> = {
  "prompts:read": true,
  "prompts:write": true,
  "tools:read": true,
  "tools:write": true,
  "skills:read": true,
  "skills:write": true,
  "agents:read": true,
  "agents:write": true,
  "runs:read": true,
  "runs:write": true,
  "evaluations:read": true,
  "evaluations:write": true,
  "labels:write": true,
  "webhooks:read": true,
  "webhooks:write": true,
};
const SCOPES = Object.keys(SCOPE_SET) as Scope[];

/** API keys (non-public routes, owners and admins): create with scopes, the key shown once, revoke. */
export function ApiKeys({ session }: { session: Session }) {
  const [keys, setKeys] = useState<ApiKey[] | null>(null);
  const [name, setName] = useState("");
  const [scopes, setScopes] = useState<Scope[]>(["prompts:read", "runs:write"]);
  const [created, setCreated] = useState<string | null>(null);
  const [error, setError] = useState<ShownError | null>(null);
  const load = useCallback(() => {
    call<{ data: ApiKey[] }>(
      "GET",
      `/api/api-keys?organizationId=${session.organizationId}`,
      undefined,
      session.accessToken,
    )
      .then((r) => setKeys(r.data))
      .catch((e) => setError(errorOf(e)));
  }, [session]);
  useEffect(load, [load]);
  async function create(e: FormEvent) {
    e.preventDefault();
    setError(null);
    try {
      const r = await call<{ key: string }>(
        "POST",
        "/api/api-keys",
        { organizationId: session.organizationId, name, scopes },
        session.accessToken,
      );
      setCreated(r.key);
      setName("");
      load();
    } catch (err) {
      setError(errorOf(err));
    }
  }
  async function revoke(id: string) {
    setError(null);
    try {
      await call("DELETE", `/api/api-keys/${id}`, undefined, session.accessToken);
      load();
    } catch (err) {
      setError(errorOf(err));
    }
  }
  return (
    <main>
      <h1>API keys</h1>
      <div className="columns">
        <form className="card" onSubmit={create} noValidate>
          <h2>New key</h2>
          <Field label="Key name" value={name} onChange={setName} issue={error?.fields.name} required />
          <fieldset>
            <legend>Scopes</legend>
            {SCOPES.map((s) => (
              <label key={s} className="check">
                <input
                  type="checkbox"
                  checked={scopes.includes(s)}
                  onChange={(e) => setScopes((cur) => (e.target.checked ? [...cur, s] : cur.filter((x) => x !== s)))}
                />{" "}
                {s}
              </label>
            ))}
          </fieldset>
          <ErrorBox error={error} />
          <button type="submit">Create key</button>
          {created && (
            <div role="status" className="card">
              <p>Copy the key now: it is shown once.</p>
              <code className="secret">{created}</code>
            </div>
          )}
        </form>
        <section aria-labelledby="keys">
          <h2 id="keys">Keys</h2>
          {keys === null ? (
            <Loading what="keys" />
          ) : keys.length === 0 ? (
            <Empty>No key yet.</Empty>
          ) : (
            <DataTable label="API keys" columns={["Name", "Scopes", "State"]}>
              {keys.map((k) => (
                <tr key={k.id}>
                  <td>{k.name}</td>
                  <td>{k.scopes.join(", ")}</td>
                  <td>
                    {k.revokedAt ? (
                      "revoked"
                    ) : (
                      <button type="button" className="secondary" onClick={() => revoke(k.id)}>
                        Revoke {k.name}
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </DataTable>
          )}
        </section>
      </div>
    </main>
  );
}
