import type { Kiln, Tool, VersionDiff } from "@kiln/sdk";
import { useCallback, useState } from "react";
import { type FieldBinding, useAction, useFields, useLoaded } from "./action.js";
import { errorOf } from "./api.js";
import { LinkList, Listed } from "./resource-list.js";
import type { PageProps } from "./router.js";
import { Empty, ErrorBox, Field, Pending, SelectField } from "./ui.js";
import { DiffTable } from "./versioned.js";

type VersionField = "config" | "inputSchema";

/** What a tool version holds, as typed JSON: its configuration and its input schema. */
function ToolVersionFields({ rows, field }: { rows: number; field: (name: VersionField) => FieldBinding }) {
  return (
    <>
      <Field label="Configuration (JSON)" multiline rows={rows} {...field("config")} />
      <Field label="Input schema (JSON Schema)" multiline rows={rows} {...field("inputSchema")} />
    </>
  );
}

/** Tools: create manual_stub and http tools; the list with their current versions. */
export function Tools({ kiln, session, navigate }: PageProps) {
  const [type, setType] = useState<"manual_stub" | "http">("manual_stub");
  const { error, setError, submit } = useAction();
  const { values, field } = useFields(
    { toolKey: "", name: "", config: '{"result": {"ok": true}}', inputSchema: '{"type": "object", "properties": {}}' },
    error,
  );
  const organizationId = session.organizationId;
  const read = useCallback(
    async () => (await kiln.tools.list({ organizationId, limit: 200 })).data,
    [kiln, organizationId],
  );
  const { value: tools, reload } = useLoaded<Tool[]>(read, setError);
  const create = submit(async () => {
    await kiln.tools.create({
      organizationId: organizationId ?? "",
      toolKey: values.toolKey,
      name: values.name,
      type,
      config: JSON.parse(values.config),
      inputSchema: JSON.parse(values.inputSchema),
    });
    reload();
  });
  return (
    <main>
      <h1>Tools</h1>
      <div className="columns">
        <form className="card" onSubmit={create} noValidate>
          <h2>New tool</h2>
          <Field label="Tool key" {...field("toolKey")} required />
          <Field label="Tool name" {...field("name")} required />
          <SelectField id="tool-type" label="Type" value={type} onChange={(v) => setType(v as "manual_stub" | "http")}>
            <option value="manual_stub">manual_stub (a fixed result)</option>
            <option value="http">http (allowlisted hosts only)</option>
          </SelectField>
          <ToolVersionFields rows={3} field={field} />
          <ErrorBox error={error} />
          <button type="submit">Create tool</button>
        </form>
        <section aria-labelledby="tools">
          <h2 id="tools">All tools</h2>
          <Listed items={tools} what="tools" empty="No tool yet.">
            {(tools) => (
              <LinkList
                items={tools}
                to={(t) => `/tools/${t.id}`}
                label={(t) => t.toolKey}
                summary={(t) => `${t.name} (${t.type}, version ${t.latestVersion})`}
                navigate={navigate}
              />
            )}
          </Listed>
        </section>
      </div>
    </main>
  );
}

/** One tool: rename, a new version (configuration, input schema), the current version's diff. */
export function ToolDetail({ kiln, id }: { kiln: Kiln; id: string }) {
  const [diff, setDiff] = useState<VersionDiff | null>(null);
  const { error, setError, act } = useAction();
  const { values, set, field } = useFields({ name: "", config: "", inputSchema: "" }, error);
  const read = useCallback(async () => {
    const t = await kiln.tools.get(id);
    set("name", t.name);
    set("config", JSON.stringify(t.config, null, 2));
    set("inputSchema", JSON.stringify(t.inputSchema, null, 2));
    if (t.latestVersion > 1) {
      kiln.tools.diff(id, t.currentVersionId).then(setDiff, (e: unknown) => setError(errorOf(e)));
    } else setDiff(null);
    return t;
  }, [kiln, id, set, setError]);
  const { value: tool, reload } = useLoaded(read, setError);
  /** Runs a change, then reads the tool again. */
  const change = (what: () => Promise<unknown>) =>
    act(async () => {
      await what();
      reload();
    });
  if (!tool) return <Pending error={error} what="the tool" />;
  const newVersion = () =>
    kiln.tools.createVersion(id, { config: JSON.parse(values.config), inputSchema: JSON.parse(values.inputSchema) });
  return (
    <main>
      <h1>
        Tool <code>{tool.toolKey}</code>
      </h1>
      <ErrorBox error={error} />
      <div className="columns">
        <section className="card" aria-labelledby="tool-edit">
          <h2 id="tool-edit">Version {tool.latestVersion}</h2>
          <Field label="Tool name" {...field("name")} />
          <button
            type="button"
            className="secondary"
            onClick={() => change(() => kiln.tools.update(id, { name: values.name }))}
          >
            Rename
          </button>
          <ToolVersionFields rows={5} field={field} />
          <button type="button" onClick={() => change(newVersion)}>
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
