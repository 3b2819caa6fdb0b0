import type { Kiln, Prompt, PromptVersion, Tool } from "@kiln/sdk";
import { useCallback, useMemo, useState } from "react";
import { useAction, useFields, useLoaded } from "./action.js";
import type { ShownError } from "./api.js";
import { CompareVersions, Labels } from "./prompt-extras.js";
import { type FamilyList, Listed, listPage } from "./resource-list.js";
import { ActButton, DataTable, ErrorBox, Field, Pending, SelectField, TemplatePreview, ToolPicker } from "./ui.js";

/** Prompts of the organization: search, create, open. */
export const promptList: FamilyList<Prompt> = {
  client: (kiln) => kiln.prompts,
  noun: "prompt",
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

export const PromptList = listPage(promptList);

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
  const { error, setError, act, submit } = useAction();
  const { values, field } = useFields(
    {
      systemPrompt: "",
      developerPrompt: "",
      variablesSchema: DEFAULT_SCHEMA,
      temperature: "",
      maxOutputTokens: "",
      outputSchema: '{"type": "object", "properties": {}}',
    },
    error,
  );
  const [saved, setSaved] = useState<PromptVersion | null>(null);
  const [format, setFormat] = useState<"text" | "json_schema">("text");
  const [attached, setAttached] = useState<string[]>([]);
  const read = useCallback(() => kiln.prompts.get(id), [kiln, id]);
  const { value: prompt, setValue: setPrompt, reload } = useLoaded(read, setError);
  const organizationId = prompt?.organizationId;
  const readTools = useCallback(
    async () => (organizationId ? (await kiln.tools.list({ organizationId, limit: 200 })).data : []),
    [kiln, organizationId],
  );
  const tools = useLoaded<Tool[]>(readTools, setError).value ?? [];
  const typedIssue = useMemo(() => schemaIssue(values.variablesSchema), [values.variablesSchema]);
  const createVersion = submit(async () => {
    if (typedIssue) return;
    const version = await kiln.prompts.createVersion(id, {
      systemPrompt: values.systemPrompt,
      developerPrompt: values.developerPrompt || null,
      variablesSchema: JSON.parse(values.variablesSchema),
      temperature: values.temperature === "" ? null : Number(values.temperature),
      maxOutputTokens: values.maxOutputTokens === "" ? null : Number(values.maxOutputTokens),
      tools: attached,
      responseFormat:
        format === "text" ? { type: "text" } : { type: "json_schema", schema: JSON.parse(values.outputSchema) },
    });
    setSaved(version);
    reload();
  });
  const publish = async (versionId: string) => setPrompt(await kiln.prompts.publish(id, { versionId }));
  if (!prompt) return <Pending error={error} what="the prompt" />;
  return (
    <main>
      <h1>{prompt.name}</h1>
      <div className="columns">
        <section className="card" aria-labelledby="editor">
          <h2 id="editor">New version</h2>
          <form onSubmit={createVersion} noValidate>
            <Field label="System prompt" multiline {...field("systemPrompt")} />
            <TemplatePreview text={values.systemPrompt} />
            <Field label="Developer prompt" multiline rows={2} {...field("developerPrompt")} />
            <Field
              label="Variables schema (JSON Schema)"
              multiline
              rows={8}
              {...field("variablesSchema")}
              issue={typedIssue ?? firstIssue(error, "variablesSchema")}
            />
            <Field label="Temperature" type="number" {...field("temperature")} />
            <Field label="Output token limit" type="number" {...field("maxOutputTokens")} />
            <SelectField
              id="response-format"
              label="Response format"
              value={format}
              onChange={(v) => setFormat(v as "text" | "json_schema")}
            >
              <option value="text">text</option>
              <option value="json_schema">JSON matching a schema</option>
            </SelectField>
            {format === "json_schema" && (
              <Field
                label="Output schema (JSON Schema)"
                multiline
                rows={4}
                {...field("outputSchema")}
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
          <Listed items={prompt.versions} what="versions" empty="No version yet.">
            {(versions) => (
              <DataTable label="Versions table" columns={["Version", "Status", "Action"]}>
                {[...versions].reverse().map((v) => (
                  <tr key={v.id}>
                    <td>{v.version}</td>
                    <td>{v.id === prompt.publishedVersionId ? "published (live)" : v.status}</td>
                    <td>
                      {v.status === "draft" && (
                        <ActButton act={act} run={() => publish(v.id)}>
                          Publish version {v.version}
                        </ActButton>
                      )}
                    </td>
                  </tr>
                ))}
              </DataTable>
            )}
          </Listed>
        </section>
      </div>
      <div className="columns">
        <Labels kiln={kiln} prompt={prompt} onMoved={reload} />
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
