import type { Kiln, Prompt, PromptVersion, Tool } from "@kiln/sdk";
import { type FormEvent, useCallback, useEffect, useMemo, useState } from "react";
import { errorOf, type Session, type ShownError } from "./api.js";
import { CompareVersions, Labels } from "./prompt-extras.js";
import { type FamilyList, ResourceList } from "./resource-list.js";
import type { Navigate } from "./router.js";
import { DataTable, Empty, ErrorBox, Field, Loading, TemplatePreview, ToolPicker } from "./ui.js";

/** Prompts of the organization: search, create, open. */
export const promptList: FamilyList<Prompt> = {
  client: (kiln) => kiln.prompts,
  noun: "prompt",
  plural: "prompts",
  path: "/prompts",
  nameLabel: "Name",
  emptyText: "No prompt yet: create the first one.",
  search: { noneMatch: "No prompt matches." },
  summary: (p) => (
    <span>
      {p.latestVersion} version{p.latestVersion === 1 ? "" : "s"}
      {p.publishedVersionId ? ", published" : ""}
    </span>
  ),
};

export function PromptList(props: { kiln: Kiln; session: Session; navigate: Navigate }) {
  return <ResourceList family={promptList} {...props} />;
}

const DEFAULT_SCHEMA = '{\n  "type": "object",\n  "properties": {},\n  "required": []\n}';

/** What is wrong with the variables schema as typed, before the API sees it. */
function schemaIssue(text: string): string | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return `is not JSON: ${(e as Error).message}`;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return "must be a JSON object";
  if ((value as { type?: unknown }).type !== "object") return 'must be a schema of "type": "object"';
  return undefined;
}

/** One prompt: its versions, a version editor, publish. */
export function PromptDetail({ kiln, id }: { kiln: Kiln; id: string }) {
  const [prompt, setPrompt] = useState<Prompt | null>(null);
  const [error, setError] = useState<ShownError | null>(null);
  const [systemPrompt, setSystemPrompt] = useState("");
  const [developerPrompt, setDeveloperPrompt] = useState("");
  const [schema, setSchema] = useState(DEFAULT_SCHEMA);
  const [temperature, setTemperature] = useState("");
  const [maxOutputTokens, setMaxOutputTokens] = useState("");
  const [saved, setSaved] = useState<PromptVersion | null>(null);
  const [tools, setTools] = useState<Tool[]>([]);
  const [format, setFormat] = useState<"text" | "json_schema">("text");
  const [outputSchema, setOutputSchema] = useState('{"type": "object", "properties": {}}');
  const [attached, setAttached] = useState<string[]>([]);
  const load = useCallback(() => {
    kiln.prompts
      .get(id)
      .then(setPrompt)
      .catch((e) => setError(errorOf(e)));
  }, [kiln, id]);
  useEffect(load, [load]);
  const organizationId = prompt?.organizationId;
  useEffect(() => {
    if (!organizationId) return;
    kiln.tools
      .list({ organizationId, limit: 200 })
      .then((page) => setTools(page.data))
      .catch((e) => setError(errorOf(e)));
  }, [kiln, organizationId]);
  const typedIssue = useMemo(() => schemaIssue(schema), [schema]);
  async function createVersion(e: FormEvent) {
    e.preventDefault();
    setError(null);
    if (typedIssue) return;
    try {
      const version = await kiln.prompts.createVersion(id, {
        systemPrompt,
        developerPrompt: developerPrompt || null,
        variablesSchema: JSON.parse(schema),
        temperature: temperature === "" ? null : Number(temperature),
        maxOutputTokens: maxOutputTokens === "" ? null : Number(maxOutputTokens),
        tools: attached,
        responseFormat:
          format === "text" ? { type: "text" } : { type: "json_schema", schema: JSON.parse(outputSchema) },
      });
      setSaved(version);
      load();
    } catch (err) {
      setError(errorOf(err));
    }
  }
  async function publish(versionId: string) {
    setError(null);
    try {
      setPrompt(await kiln.prompts.publish(id, { versionId }));
    } catch (err) {
      setError(errorOf(err));
    }
  }
  if (!prompt) return <main>{error ? <ErrorBox error={error} /> : <Loading what="the prompt" />}</main>;
  return (
    <main>
      <h1>{prompt.name}</h1>
      <div className="columns">
        <section className="card" aria-labelledby="editor">
          <h2 id="editor">New version</h2>
          <form onSubmit={createVersion} noValidate>
            <Field
              label="System prompt"
              multiline
              value={systemPrompt}
              onChange={setSystemPrompt}
              issue={error?.fields.systemPrompt}
            />
            <TemplatePreview text={systemPrompt} />
            <Field
              label="Developer prompt"
              multiline
              rows={2}
              value={developerPrompt}
              onChange={setDeveloperPrompt}
              issue={error?.fields.developerPrompt}
            />
            <Field
              label="Variables schema (JSON Schema)"
              multiline
              rows={8}
              value={schema}
              onChange={setSchema}
              issue={typedIssue ?? firstIssue(error, "variablesSchema")}
            />
            <Field
              label="Temperature"
              type="number"
              value={temperature}
              onChange={setTemperature}
              issue={error?.fields.temperature}
            />
            <Field
              label="Output token limit"
              type="number"
              value={maxOutputTokens}
              onChange={setMaxOutputTokens}
              issue={error?.fields.maxOutputTokens}
            />
            <div className="field">
              <label htmlFor="response-format">Response format</label>
              <select
                id="response-format"
                value={format}
                onChange={(e) => setFormat(e.target.value as "text" | "json_schema")}
              >
                <option value="text">text</option>
                <option value="json_schema">JSON matching a schema</option>
              </select>
            </div>
            {format === "json_schema" && (
              <Field
                label="Output schema (JSON Schema)"
                multiline
                rows={4}
                value={outputSchema}
                onChange={setOutputSchema}
                issue={firstIssue(error, "responseFormat")}
              />
            )}
            <ToolPicker tools={tools} chosen={attached} onChange={setAttached} legend="Attached tools" />
            <ErrorBox error={error} />
            <button type="submit" disabled={typedIssue !== undefined}>
              Create version
            </button>
            {saved && <p role="status">Version {saved.version} created as a draft.</p>}
          </form>
        </section>
        <section aria-labelledby="versions">
          <h2 id="versions">Versions</h2>
          {prompt.versions.length === 0 ? (
            <Empty>No version yet.</Empty>
          ) : (
            <DataTable label="Versions table" columns={["Version", "Status", "Action"]}>
              {[...prompt.versions].reverse().map((v) => (
                <tr key={v.id}>
                  <td>{v.version}</td>
                  <td>{v.id === prompt.publishedVersionId ? "published (live)" : v.status}</td>
                  <td>
                    {v.status === "draft" && (
                      <button type="button" onClick={() => publish(v.id)}>
                        Publish version {v.version}
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </DataTable>
          )}
        </section>
      </div>
      <div className="columns">
        <Labels kiln={kiln} prompt={prompt} onMoved={load} />
        <CompareVersions key={prompt.versions.length} kiln={kiln} prompt={prompt} />
      </div>
    </main>
  );
}

/** The API's issue for a field or anything under it (variablesSchema.properties.x…). */
function firstIssue(error: ShownError | null, field: string): string | undefined {
  if (!error) return undefined;
  const key = Object.keys(error.fields).find((f) => f === field || f.startsWith(`${field}.`));
  return key ? `${key === field ? "" : `${key}: `}${error.fields[key]}` : undefined;
}
