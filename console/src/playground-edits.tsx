/**
 * The playground as the editor: a prompt's version opened for editing right there (its messages,
 * variables schema, temperature and output token limit), run without saving as the request's
 * `draft` (api.md "Runs": a run of an unsaved version), and saved as a new version once it reads
 * right. The edits survive a visit to another page, as the rest of the playground does.
 */
import type { CreatePromptVersionRequest, Kiln } from "@kiln/sdk";
import { useState } from "react";
import type { ShownError } from "./api.js";
import { MessagesEditor } from "./messages-editor.js";
import { bodyOf, draftIssues, draftOf, type PromptDraft } from "./prompt-draft.js";
import { useSessionState } from "./session-state.js";
import { Field } from "./ui.js";

/** What is being edited: the fields, and the version they started from. */
export interface Edits {
  draft: PromptDraft;
  /** The version the edits started from, by id and number. */
  baseVersionId: string;
  baseVersion: number;
}

/** The JSON object a schema field holds, else undefined (the field then says why). */
export function schemaOf(edits: Edits | null): Record<string, unknown> | undefined {
  if (!edits) return undefined;
  try {
    const parsed: unknown = JSON.parse(edits.draft.variablesSchema);
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** The run request's `draft` of the edits (a version's body without its change message), or the issue that stops it. */
export function draftBodyOf(edits: Edits): { body?: CreatePromptVersionRequest; issue?: string } {
  const schema = schemaOf(edits);
  if (!schema) return { issue: "The variables schema is not a JSON object: fix it to run the edits." };
  const issues = Object.entries(draftIssues(edits.draft));
  if (issues.length > 0) return { issue: issues.map(([field, issue]) => `${field} ${issue}`).join("; ") };
  return { body: bodyOf(edits.draft, schema) };
}

/** The edits of the playground's prompt, kept per tab and organization; null when not editing. */
export function usePlaygroundEdits(kept: string) {
  const [edits, setEdits] = useSessionState<Edits | null>(`${kept}.edits`, null);
  const [saved, setSaved] = useState<{ version: number; id: string } | null>(null);

  /** Opens `versionId` of the prompt for editing. */
  async function open(kiln: Kiln, promptId: string, versionId: string) {
    const prompt = await kiln.prompts.get(promptId, { versionId });
    const version = prompt.version;
    if (!version) throw new Error("that version cannot be read");
    setSaved(null);
    setEdits({ draft: draftOf(version), baseVersionId: version.id, baseVersion: version.version });
  }

  /** Saves the edits as a new version of the prompt and keeps editing from it. */
  async function save(kiln: Kiln, promptId: string) {
    if (!edits) return;
    const { body, issue } = draftBodyOf(edits);
    if (!body) throw new Error(issue);
    const version = await kiln.prompts.createVersion(promptId, {
      ...body,
      message: `Edited in the playground from version ${edits.baseVersion}`,
    });
    setEdits({ ...edits, baseVersionId: version.id, baseVersion: version.version });
    setSaved({ version: version.version, id: version.id });
  }

  return { edits, setEdits, saved, open, save, close: () => setEdits(null) };
}

/** The API's issue of a draft field (`draft.systemPrompt`, `draft.messages[2].content`). */
function draftIssueOf(error: ShownError | null, edits: Edits, i: number, field: string): string | undefined {
  if (!error) return undefined;
  const text = edits.draft.messages.length <= 2 && edits.draft.messages[0]?.role === "system";
  if (text && field === "content") {
    const named = i === 0 ? "draft.systemPrompt" : i === 1 ? "draft.developerPrompt" : undefined;
    if (named && error.fields[named]) return error.fields[named];
  }
  return error.fields[`draft.messages[${i}].${field}`];
}

/** The editor of the version being tried: what the next Run sends as its draft. */
export function EditsForm({
  edits,
  onChange,
  error,
}: {
  edits: Edits;
  onChange: (edits: Edits) => void;
  error: ShownError | null;
}) {
  const set = (patch: Partial<PromptDraft>) => onChange({ ...edits, draft: { ...edits.draft, ...patch } });
  const issues = draftIssues(edits.draft);
  const schemaIssue = schemaOf(edits)
    ? error?.fields["draft.variablesSchema"]
    : "is not a JSON object: the variables form keeps its last good fields";
  return (
    <fieldset className="playground-edits">
      <legend>Unsaved edits of version {edits.baseVersion}</legend>
      <MessagesEditor
        messages={edits.draft.messages}
        onChange={(messages) => set({ messages })}
        issueOf={(i, field) => draftIssueOf(error, edits, i, field)}
      />
      <div className="side-by-side">
        <Field
          label="Temperature"
          value={edits.draft.temperature}
          onChange={(temperature) => set({ temperature })}
          issue={issues.temperature ?? error?.fields["draft.temperature"]}
          placeholder="the model's default"
        />
        <Field
          label="Output token limit"
          value={edits.draft.maxOutputTokens}
          onChange={(maxOutputTokens) => set({ maxOutputTokens })}
          issue={issues.maxOutputTokens ?? error?.fields["draft.maxOutputTokens"]}
          placeholder="the model's default"
        />
      </div>
      <Field
        label="Variables schema (JSON)"
        multiline
        rows={6}
        value={edits.draft.variablesSchema}
        onChange={(variablesSchema) => set({ variablesSchema })}
        issue={schemaIssue}
      />
    </fieldset>
  );
}

/** "Edit this version here", or the edits with Save as a new version and Discard. */
export function EditHere({
  editing,
  error,
  onOpen,
  onSave,
  canOpen,
}: {
  editing: ReturnType<typeof usePlaygroundEdits>;
  error: ShownError | null;
  onOpen: () => void;
  onSave: () => void;
  canOpen: boolean;
}) {
  const { edits, saved } = editing;
  if (!edits) {
    return (
      <div className="actions">
        <button type="button" className="secondary" onClick={onOpen} disabled={!canOpen}>
          Edit this version here
        </button>
      </div>
    );
  }
  return (
    <>
      <EditsForm edits={edits} onChange={editing.setEdits} error={error} />
      <div className="actions">
        <button type="button" className="secondary" onClick={onSave}>
          Save as a new version
        </button>
        <button type="button" className="secondary" onClick={editing.close}>
          Discard the edits
        </button>
      </div>
      {saved && (
        <p className="hint" role="status">
          Saved as version {saved.version}: runs of the edits now start from it.
        </p>
      )}
    </>
  );
}
