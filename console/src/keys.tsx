import type { ApiKey, RequestBody } from "@kiln/sdk";
import { useCallback, useState } from "react";
import { useAction, useLoaded } from "./action.js";
import { call, type Session } from "./api.js";
import { ConfirmButton } from "./confirm.js";
import { Listed } from "./resource-list.js";
import { CheckList, DataTable, ErrorBox, Field } from "./ui.js";

/**
 * The key scopes, checked against the API's document both ways: a scope the API adds or drops
 * fails to compile here (a Record over the scope union needs every key, and only those).
 */
export type Scope = RequestBody<"createApiKey">["scopes"][number];
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
  "traces:read": true,
  "traces:write": true,
  "connections:read": true,
  "connections:write": true,
  "audit:read": true,
};
export const SCOPES = Object.keys(SCOPE_SET) as Scope[];

/**
 * A "Tokens per minute" field's value as the API takes it: empty is no limit; anything but digits
 * goes as it was typed, for the API to refuse naming the field (a NaN would go out as null).
 */
const limitOf = (text: string): number | string | undefined => {
  const t = text.trim();
  if (t === "") return undefined;
  return /^\d+$/.test(t) ? Number(t) : t;
};

/**
 * API keys (non-public routes, owners and admins): create with scopes and an optional
 * token-per-minute limit (docs/usage.md "Token-per-minute limits"), the key shown once, revoke.
 */
export function ApiKeys({ session }: { session: Session }) {
  const [name, setName] = useState("");
  const [scopes, setScopes] = useState<Scope[]>(["prompts:read", "runs:write"]);
  const [tokensPerMinute, setTokensPerMinute] = useState("");
  const [created, setCreated] = useState<string | null>(null);
  const { error, setError, act, submit } = useAction();
  const read = useCallback(async () => {
    const path = `/api/api-keys?organizationId=${session.organizationId}`;
    return (await call<{ data: ApiKey[] }>("GET", path)).data;
  }, [session]);
  const { value: keys, reload } = useLoaded(read, setError);
  const create = submit(async () => {
    const body = { organizationId: session.organizationId, name, scopes, tokensPerMinute: limitOf(tokensPerMinute) };
    const r = await call<{ key: string }>("POST", "/api/api-keys", body);
    setCreated(r.key);
    setName("");
    setTokensPerMinute("");
    reload();
  });
  const revoke = async (id: string) => {
    await call("DELETE", `/api/api-keys/${id}`);
    reload();
  };
  return (
    <main>
      <h1>API keys</h1>
      <div className="columns">
        <form className="card" onSubmit={create} noValidate>
          <h2>New key</h2>
          <Field label="Key name" value={name} onChange={setName} issue={error?.fields.name} required />
          <fieldset>
            <legend>Scopes</legend>
            <CheckList values={SCOPES} chosen={scopes} onChange={setScopes} label={(s) => s} />
          </fieldset>
          <Field
            label="Tokens per minute (empty: no limit)"
            type="number"
            value={tokensPerMinute}
            onChange={setTokensPerMinute}
            issue={error?.fields.tokensPerMinute}
          />
          <ErrorBox error={error} shownFields={["name", "tokensPerMinute"]} />
          <button type="submit">Create key</button>
          {created && <NewKey secret={created} />}
        </form>
        <section aria-labelledby="keys">
          <h2 id="keys">Keys</h2>
          <Listed items={keys} what="keys" empty="No key yet.">
            {(keys) => (
              <DataTable label="API keys" columns={["Name", "Scopes", "Tokens per minute", "State"]}>
                {keys.map((k) => (
                  <tr key={k.id}>
                    <td>{k.name}</td>
                    <td>
                      {k.scopes.map((s) => (
                        <span key={s} className="chip">
                          {s}
                        </span>
                      ))}
                    </td>
                    <td>{k.tokensPerMinute === null ? "no limit" : k.tokensPerMinute.toLocaleString("en-US")}</td>
                    <td>
                      {k.revokedAt ? (
                        <span className="badge status-failed">revoked</span>
                      ) : (
                        <ConfirmButton
                          act={act}
                          run={() => revoke(k.id)}
                          className="secondary"
                          question={`Revoke ${k.name}? Every call made with it is refused from now on; this cannot be undone.`}
                          confirmLabel={`Yes, revoke ${k.name}`}
                          danger
                        >
                          Revoke {k.name}
                        </ConfirmButton>
                      )}
                    </td>
                  </tr>
                ))}
              </DataTable>
            )}
          </Listed>
        </section>
      </div>
    </main>
  );
}

/** A key just created: shown once, with a button that copies it. */
function NewKey({ secret }: { secret: string }) {
  const [copied, setCopied] = useState<boolean | null>(null);
  return (
    <div className="card new-key">
      <p>
        <strong>Copy the key now:</strong> it is shown once.
      </p>
      <code className="secret">{secret}</code>
      <div className="actions">
        <button
          type="button"
          onClick={() =>
            navigator.clipboard.writeText(secret).then(
              () => setCopied(true),
              () => setCopied(false),
            )
          }
        >
          Copy key
        </button>
        <span role="status">
          {copied === true && "Copied to the clipboard."}
          {copied === false && "The browser refused the clipboard: select the key and copy it."}
        </span>
      </div>
    </div>
  );
}
