import type { Kiln, Model, Prompt, PromptVersion, Tool } from "@kiln/sdk";
import { useCallback, useMemo, useState } from "react";
import { useAction, useLoaded } from "./action.js";
import { MessagePreviews, MessagesEditor } from "./messages-editor.js";
import { ModelPicker } from "./model-picker.js";
import { useRunnableModels } from "./org-models.js";
import {
  bodyOf,
  documentDiff,
  draftDocument,
  draftIssues,
  draftOf,
  type PromptDraft,
  versionDocument,
} from "./prompt-draft.js";
import { useSessionState } from "./session-state.js";
import { ErrorBox, Field, Loading, SelectField, ToolPicker } from "./ui.js";
import { schemaWith } from "./variables.js";
import { VariablesEditor } from "./variables-editor.js";
import { apiIssue, unshown, variablesOf, withUndeclared } from "./version-editor-parts.js";
import { DiffTable } from "./versioned.js";

/**
 * "New version": starts from the latest version (or one picked, or blank), holds every field of a
 * version (model and parameters included), and shows the diff against where it started before it
 * creates the version.
 */
export function VersionEditor({
  kiln,
  prompt,
  onCreated,
}: {
  kiln: Kiln;
  prompt: Prompt;
  onCreated: (version: PromptVersion) => void;
}) {
  const [baseId, setBaseId] = useState(prompt.versions.at(-1)?.id ?? "");
  const { error, setError } = useAction();
  const read = useCallback(
    async () => ({ base: baseId ? (await kiln.prompts.get(prompt.id, { versionId: baseId })).version : null }),
    [kiln, prompt.id, baseId],
  );
  const loaded = useLoaded(read, setError).value;
  const runnable = useRunnableModels(kiln, prompt.organizationId);
  const readTools = useCallback(
    async () => (await kiln.tools.list({ organizationId: prompt.organizationId, limit: 200 })).data,
    [kiln, prompt.organizationId],
  );
  const tools = useLoaded<Tool[]>(readTools, setError).value ?? [];
  const latest = prompt.versions.at(-1);
  return (
    <section className="card" aria-labelledby="editor">
      <h2 id="editor">New version</h2>
      {prompt.versions.length > 0 && (
        <SelectField id="start-from" label="Start from" value={baseId} onChange={setBaseId}>
          {[...prompt.versions].reverse().map((v) => (
            <option key={v.id} value={v.id}>
              Version {v.version}
              {v.id === latest?.id ? " (latest)" : ""}
              {v.id === prompt.publishedVersionId ? " (live)" : ""}
            </option>
          ))}
          <option value="">A blank version</option>
        </SelectField>
      )}
      <ErrorBox error={loaded ? null : error} />
      {loaded && (loaded.base?.id ?? "") === baseId ? (
        <DraftForm
          key={baseId}
          kiln={kiln}
          prompt={prompt}
          base={loaded.base}
          runnable={runnable}
          tools={tools}
          onCreated={onCreated}
        />
      ) : (
        !error && <Loading what="the version" />
      )}
    </section>
  );
}

function DraftForm({
  kiln,
  prompt,
  base,
  runnable: { models, routes },
  tools,
  onCreated,
}: {
  kiln: Kiln;
  prompt: Prompt;
  base: PromptVersion | null;
  runnable: { models: Model[]; routes: string[] };
  tools: Tool[];
  onCreated: (version: PromptVersion) => void;
}) {
  const { error, submit, busy } = useAction();
  // Unsaved edits outlive a visit to another page (per prompt and starting version, in this tab), and
  // the sample values outlive the version they were typed for.
  const [draft, setStoredDraft, forgetDraft, restored] = useSessionState(
    `kiln.draft.${prompt.id}.${base?.id ?? "blank"}`,
    draftOf(base),
  );
  const [showRestored, setShowRestored] = useState(restored);
  const [reviewing, setReviewing] = useState(false);
  const [asJson, setAsJson] = useState(false);
  const [samples, setSamples] = useSessionState<Record<string, string>>(`kiln.samples.${prompt.id}`, {});
  const [changeMessage, setChangeMessage] = useState("");
  const edit = (patch: Partial<PromptDraft>) => {
    setReviewing(false);
    setStoredDraft({ ...draft, ...patch });
  };
  const discard = () => {
    setStoredDraft(draftOf(base));
    forgetDraft();
    setShowRestored(false);
  };
  const bind = (name: "temperature" | "maxOutputTokens" | "cacheTtlSeconds" | "outputSchema") => ({
    value: draft[name],
    onChange: (value: string) => edit({ [name]: value }),
    issue: typed[name] ?? apiIssue(error, name === "outputSchema" ? "responseFormat" : name),
  });
  const variables = useMemo(
    () =>
      variablesOf(
        draft.variablesSchema,
        draft.messages.map((m) => (m.role === "placeholder" ? "" : m.content)),
      ),
    [draft.variablesSchema, draft.messages],
  );
  // As a form, the rows are the schema; as JSON, the schema is what was typed, plus the template's undeclared variables.
  const schema = variables.typed && (asJson ? withUndeclared : schemaWith)(variables.typed, variables.specs);
  const typed = draftIssues(draft);
  const blocked = !schema || Object.keys(typed).length > 0;
  const changes = useMemo(
    () => (reviewing && schema ? documentDiff(base && versionDocument(base), draftDocument(draft, schema)) : []),
    [reviewing, schema, base, draft],
  );
  const next = prompt.latestVersion + 1;
  const create = submit(async () => {
    if (!schema) return;
    const message = changeMessage.trim();
    const created = await kiln.prompts.createVersion(prompt.id, {
      ...bodyOf(draft, schema),
      ...(message && { message }),
    });
    forgetDraft();
    onCreated(created);
  });
  const chosenTools = draft.tools.map((t) => t.toolId);
  const pickTools = (ids: string[]) =>
    edit({
      tools: ids.flatMap((toolId) => {
        const kept = draft.tools.find((t) => t.toolId === toolId);
        const tool = tools.find((t) => t.id === toolId);
        if (kept) return [kept];
        return tool ? [{ toolId, toolVersionId: tool.currentVersionId, toolKey: tool.toolKey }] : [];
      }),
    });
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        if (!blocked) setReviewing(true);
      }}
      noValidate
    >
      {showRestored && (
        <p className="restored" role="status">
          Your unsaved edits from before are back.{" "}
          <button type="button" className="secondary" onClick={discard}>
            Discard them
          </button>
        </p>
      )}
      <div className="editor-grid">
        <div>
          <MessagesEditor
            messages={draft.messages}
            onChange={(messages) => edit({ messages })}
            issueOf={(i, field) =>
              apiIssue(error, `messages[${i}].${field}`) ?? (i === 0 ? apiIssue(error, "systemPrompt") : undefined)
            }
          />
          {variables.templateError && <p className="issue">The template does not parse: {variables.templateError}</p>}
          <h3>Preview with the sample values</h3>
          <MessagePreviews messages={draft.messages} specs={variables.specs} samples={samples} />
          <VariablesEditor
            state={{ ...variables, issue: variables.issue ?? apiIssue(error, "variablesSchema") }}
            text={draft.variablesSchema}
            onText={(variablesSchema) => edit({ variablesSchema })}
            asJson={asJson}
            onAsJson={setAsJson}
            samples={samples}
            onSamples={setSamples}
          />
        </div>
        <div>
          <h3>Model and parameters</h3>
          <ModelPicker
            models={models}
            routes={routes}
            value={draft.model}
            onChange={(model) => edit({ model })}
            needs={{ tools: draft.tools.length > 0, jsonSchema: draft.format === "json_schema" }}
          />
          <Field label="Temperature" type="number" {...bind("temperature")} />
          <Field label="Output token limit" type="number" {...bind("maxOutputTokens")} />
          <Field label="Cache answers for (seconds)" type="number" {...bind("cacheTtlSeconds")} />
          <SelectField
            id="response-format"
            label="Response format"
            value={draft.format}
            onChange={(v) => edit({ format: v as PromptDraft["format"] })}
          >
            <option value="text">text</option>
            <option value="json_schema">JSON matching a schema</option>
          </SelectField>
          {draft.format === "json_schema" && (
            <Field label="Output schema (JSON Schema)" multiline rows={4} {...bind("outputSchema")} />
          )}
          {tools.length === 0 ? (
            <p className="hint">No tool in this organization yet: create one under Tools to attach it.</p>
          ) : (
            <ToolPicker tools={tools} chosen={chosenTools} onChange={pickTools} legend="Attached tools" />
          )}
        </div>
      </div>
      <ErrorBox error={error && unshown(error)} />
      {reviewing ? (
        <section aria-labelledby="review" className="review">
          <h3 id="review">{base ? `Changes against version ${base.version}` : `Version ${next}: all new`}</h3>
          <DiffTable label="Changes in the new version" changes={changes} />
          <Field
            label="Change message (optional)"
            multiline
            rows={2}
            value={changeMessage}
            onChange={setChangeMessage}
            issue={apiIssue(error, "message")}
          />
          <p className="hint">The new version is created as a draft: nothing runs it until it is published.</p>
          <div className="actions">
            <button type="button" onClick={create} disabled={busy || (base !== null && changes.length === 0)}>
              Create version {next}
            </button>
            <button type="button" className="secondary" onClick={() => setReviewing(false)}>
              Keep editing
            </button>
          </div>
        </section>
      ) : (
        <button type="submit" disabled={blocked}>
          Review changes
        </button>
      )}
    </form>
  );
}
