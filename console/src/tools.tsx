import type { Kiln, Tool, VersionDiff } from "@kiln/sdk";
import { type FormEvent, useCallback, useEffect, useState } from "react";
import { errorOf, type Session, type ShownError } from "./api.js";
import type { Navigate } from "./router.js";
import { DiffTable, Empty, ErrorBox, Field, Link, Loading } from "./ui.js";

type TextState = [string, (value: string) => void];

/** What a tool version holds, as typed JSON: its configuration and its input schema. */
function ToolVersionFields(props: {
  rows: number;
  config: TextState;
  inputSchema: TextState;
  error: ShownError | null;
}) {
  const issues = props.error?.fields;
  const fields: [string, TextState, string][] = [
    ["Configuration (JSON)", props.config, "config"],
    ["Input schema (JSON Schema)", props.inputSchema, "inputSchema"],
  ];
  return (
    <>
      {fields.map(([label, [value, onChange], field]) => (
        <Field
          key={field}
          label={label}
          multiline
          rows={props.rows}
          value={value}
          onChange={onChange}
          issue={issues?.[field]}
        />
      ))}
    </>
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
          <ToolVersionFields
            rows={3}
            config={[config, setConfig]}
            inputSchema={[inputSchema, setInputSchema]}
            error={error}
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
          <ToolVersionFields
            rows={5}
            config={[config, setConfig]}
            inputSchema={[inputSchema, setInputSchema]}
            error={error}
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
