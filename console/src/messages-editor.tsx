/**
 * The messages of a version being written (api.md "Chat prompts"): a row per message with its role,
 * its template (or a placeholder's name), moved up or down or removed; messages and placeholders
 * added at the end. The first system message and a developer message right after it keep the names
 * the editor always gave them ("System prompt", "Developer prompt"), so a text version reads as
 * before; every other row is "Message N".
 */
import type { DraftMessage } from "./prompt-draft.js";
import { Field, SelectField } from "./ui.js";
import type { VariableSpec } from "./variables.js";
import { SampledPreview } from "./variables-editor.js";

const ROLES: DraftMessage["role"][] = ["system", "developer", "user", "assistant", "placeholder"];

/** What a row's text field is called. */
export function messageLabel(messages: DraftMessage[], i: number): string {
  const m = messages[i];
  if (i === 0 && m?.role === "system") return "System prompt";
  if (i === 1 && m?.role === "developer" && messages[0]?.role === "system") return "Developer prompt";
  return `Message ${i + 1}`;
}

export function MessagesEditor({
  messages,
  onChange,
  issueOf,
}: {
  messages: DraftMessage[];
  onChange: (messages: DraftMessage[]) => void;
  /** The API's issue for `messages[i].content` (or a name), else undefined. */
  issueOf: (i: number, field: "content" | "name" | "role") => string | undefined;
}) {
  const set = (i: number, patch: Partial<DraftMessage>) =>
    onChange(messages.map((m, j) => (j === i ? { ...m, ...patch } : m)));
  const move = (i: number, by: -1 | 1) => {
    const next = [...messages];
    const [m] = next.splice(i, 1);
    if (m) next.splice(i + by, 0, m);
    onChange(next);
  };
  const add = (m: DraftMessage) => onChange([...messages, m]);
  const hasPlaceholder = messages.some((m) => m.role === "placeholder");
  return (
    <fieldset className="messages" aria-label="Messages">
      <legend>Messages</legend>
      {messages.map((m, i) => {
        const label = messageLabel(messages, i);
        return (
          // biome-ignore lint/suspicious/noArrayIndexKey: rows are positions; moving one re-renders both
          // biome-ignore lint/a11y/useSemanticElements: a <fieldset> row made the release dialog's Cancel lose its opener's focus (test/console-prompts.test.ts)
          <div key={i} className="message-row" role="group" aria-label={`Row ${i + 1}: ${m.role}`}>
            <SelectField
              id={`message-${i}-role`}
              label="Role"
              value={m.role}
              onChange={(role) => set(i, { role: role as DraftMessage["role"] })}
            >
              {ROLES.map((r) => (
                <option key={r} value={r}>
                  {r}
                </option>
              ))}
            </SelectField>
            {m.role === "placeholder" ? (
              <Field
                label="Placeholder name"
                value={m.name}
                onChange={(name) => set(i, { name })}
                issue={issueOf(i, "name")}
              />
            ) : (
              <Field
                label={label}
                multiline
                rows={i === 0 ? 6 : 3}
                value={m.content}
                onChange={(content) => set(i, { content })}
                issue={issueOf(i, "content") ?? issueOf(i, "role")}
              />
            )}
            <div className="actions">
              <button type="button" className="secondary" disabled={i === 0} onClick={() => move(i, -1)}>
                Move up
              </button>
              <button
                type="button"
                className="secondary"
                disabled={i === messages.length - 1}
                onClick={() => move(i, 1)}
              >
                Move down
              </button>
              <button
                type="button"
                className="secondary"
                disabled={messages.length === 1}
                onClick={() => onChange(messages.filter((_, j) => j !== i))}
              >
                Remove
              </button>
            </div>
          </div>
        );
      })}
      <div className="actions">
        <button type="button" className="secondary" onClick={() => add({ role: "user", content: "", name: "" })}>
          Add message
        </button>
        <button
          type="button"
          className="secondary"
          onClick={() => add({ role: "placeholder", content: "", name: hasPlaceholder ? "" : "history" })}
        >
          Add placeholder
        </button>
      </div>
      <p className="hint">
        A placeholder is where a run's own messages (the conversation so far) go; without one they follow the messages
        above. Variables work in every message.
      </p>
    </fieldset>
  );
}

/** What a row's preview is called: the names the editor always gave them, else "Message N preview". */
function previewLabel(messages: DraftMessage[], i: number): string {
  const label = messageLabel(messages, i);
  return label === "System prompt" ? "Prompt preview" : `${label} preview`;
}

/** Each text message rendered with the sample values; a placeholder as where the conversation goes. */
export function MessagePreviews({
  messages,
  specs,
  samples,
}: {
  messages: DraftMessage[];
  specs: VariableSpec[];
  samples: Record<string, string>;
}) {
  if (messages.every((m) => m.role !== "placeholder" && m.content === "")) {
    return <p className="hint">Nothing to preview yet.</p>;
  }
  return (
    <ol className="message-previews">
      {messages.map((m, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: previews follow the rows' positions
        <li key={i}>
          <span className="hint">{m.role}</span>
          {m.role === "placeholder" ? (
            <p className="hint">(the run's messages: {m.name || "unnamed"})</p>
          ) : (
            <SampledPreview label={previewLabel(messages, i)} template={m.content} specs={specs} samples={samples} />
          )}
        </li>
      ))}
    </ol>
  );
}
