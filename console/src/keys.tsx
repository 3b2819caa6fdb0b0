import type { ApiKey, Kiln, RequestBody, Tool, VersionDiff } from "@kiln/sdk";
import { type FormEvent, useCallback, useEffect, useState } from "react";
import { call, errorOf, type Session, type ShownError } from "./api.js";
import type { Navigate } from "./router.js";
import { DiffTable, Empty, ErrorBox, Field, Link, Loading, TableWrap } from "./ui.js";

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
            <TableWrap label="API keys">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Scopes</th>
                    <th scope="col">State</th>
                  </tr>
                </thead>
                <tbody>
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
                </tbody>
              </table>
            </TableWrap>
          )}
        </section>
      </div>
    </main>
  );
}

/** Tools: create manual_stub and http tools; the list with their current versions. */
export function Tools({ kiln, session, navigate }: { kiln: Kiln; session: Session; navigate: Navigate }) {
  const [tools, setTools] = useState<Tool[] | null>(null);
  const [toolKey, setToolKey] = useState("");
  const [name, setName] = useState("");
  const [type, setType] = useState<"manual_stub" | "http">("manual_stub");
  const [config, setConfig] = useState('{"result": {"ok": true}}');
  const [inputSchema, setInputSchema] = useState('{"type": "object", "properties": {}}');
  const [error, setError] = useState<ShownError | null>(null);
  const load = useCallback(() => {
    kiln.tools
      .list({ organizationId: session.organizationId, limit: 200 })
      .then((page) => setTools(page.data))
      .catch((e) => setError(errorOf(e)));
  }, [kiln, session.organizationId]);
  useEffect(load, [load]);
  async function create(e: FormEvent) {
    e.preventDefault();
    setError(null);
    try {
      await kiln.tools.create({
        organizationId: session.organizationId ?? "",
        toolKey,
        name,
        type,
        config: JSON.parse(config),
        inputSchema: JSON.parse(inputSchema),
      });
      load();
    } catch (err) {
      setError(errorOf(err));
    }
  }
  return (
    <main>
      <h1>Tools</h1>
      <div className="columns">
        <form className="card" onSubmit={create} noValidate>
          <h2>New tool</h2>
          <Field label="Tool key" value={toolKey} onChange={setToolKey} issue={error?.fields.toolKey} required />
          <Field label="Tool name" value={name} onChange={setName} issue={error?.fields.name} required />
          <div className="field">
            <label htmlFor="tool-type">Type</label>
            <select id="tool-type" value={type} onChange={(e) => setType(e.target.value as "manual_stub" | "http")}>
              <option value="manual_stub">manual_stub (a fixed result)</option>
              <option value="http">http (allowlisted hosts only)</option>
            </select>
          </div>
          <Field
            label="Configuration (JSON)"
            multiline
            rows={3}
            value={config}
            onChange={setConfig}
            issue={error?.fields.config}
          />
          <Field
            label="Input schema (JSON Schema)"
            multiline
            rows={3}
            value={inputSchema}
            onChange={setInputSchema}
            issue={error?.fields.inputSchema}
          />
          <ErrorBox error={error} />
          <button type="submit">Create tool</button>
        </form>
        <section aria-labelledby="tools">
          <h2 id="tools">All tools</h2>
          {tools === null ? (
            <Loading what="tools" />
          ) : tools.length === 0 ? (
            <Empty>No tool yet.</Empty>
          ) : (
            <ul>
              {tools.map((t) => (
                <li key={t.id}>
                  <Link to={`/tools/${t.id}`} navigate={navigate}>
                    {t.toolKey}
                  </Link>{" "}
                  {t.name} ({t.type}, version {t.latestVersion})
                </li>
              ))}
            </ul>
          )}
        </section>
      </div>
    </main>
  );
}

/** One tool: rename, a new version (configuration, input schema), the current version's diff. */
export function ToolDetail({ kiln, id }: { kiln: Kiln; id: string }) {
  const [tool, setTool] = useState<Tool | null>(null);
  const [name, setName] = useState("");
  const [config, setConfig] = useState("");
  const [inputSchema, setInputSchema] = useState("");
  const [diff, setDiff] = useState<VersionDiff | null>(null);
  const [error, setError] = useState<ShownError | null>(null);
  const load = useCallback(() => {
    kiln.tools
      .get(id)
      .then(async (t) => {
        setTool(t);
        setName(t.name);
        setConfig(JSON.stringify(t.config, null, 2));
        setInputSchema(JSON.stringify(t.inputSchema, null, 2));
        setDiff(t.latestVersion > 1 ? await kiln.tools.diff(id, t.currentVersionId) : null);
      })
      .catch((e) => setError(errorOf(e)));
  }, [kiln, id]);
  useEffect(load, [load]);
  const act = async (what: () => Promise<unknown>) => {
    setError(null);
    try {
      await what();
      load();
    } catch (err) {
      setError(errorOf(err));
    }
  };
  if (!tool) return <main>{error ? <ErrorBox error={error} /> : <Loading what="the tool" />}</main>;
  return (
    <main>
      <h1>
        Tool <code>{tool.toolKey}</code>
      </h1>
      <ErrorBox error={error} />
      <div className="columns">
        <section className="card" aria-labelledby="tool-edit">
          <h2 id="tool-edit">Version {tool.latestVersion}</h2>
          <Field label="Tool name" value={name} onChange={setName} issue={error?.fields.name} />
          <button type="button" className="secondary" onClick={() => act(() => kiln.tools.update(id, { name }))}>
            Rename
          </button>
          <Field
            label="Configuration (JSON)"
            multiline
            rows={5}
            value={config}
            onChange={setConfig}
            issue={error?.fields.config}
          />
          <Field
            label="Input schema (JSON Schema)"
            multiline
            rows={5}
            value={inputSchema}
            onChange={setInputSchema}
            issue={error?.fields.inputSchema}
          />
          <button
            type="button"
            onClick={() =>
              act(() =>
                kiln.tools.createVersion(id, { config: JSON.parse(config), inputSchema: JSON.parse(inputSchema) }),
              )
            }
          >
            Create version
          </button>
        </section>
        <section className="card" aria-labelledby="tool-diff">
          <h2 id="tool-diff">Changes in the current version</h2>
          {diff ? <DiffTable label="Tool version diff" changes={diff.changes} /> : <Empty>Only one version.</Empty>}
        </section>
      </div>
    </main>
  );
}
