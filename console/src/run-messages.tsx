import type { Kiln } from "@kiln/sdk";
import { useEffect, useState } from "react";
import type { Run } from "./run-names.js";

interface Message {
  role: string;
  content: string;
  /** The step it was sent for, in a multi-step run. */
  step?: string;
}

const asText = (v: unknown) => (v === undefined || v === null ? "" : typeof v === "string" ? v : JSON.stringify(v));

function lookUp(variables: unknown, path: string): unknown {
  let value: unknown = variables;
  for (const key of path.split(".")) {
    if (value === null || typeof value !== "object" || !Object.hasOwn(value, key)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/**
 * A template filled as the platform fills it for the plain `{{name}}` and `{{a.b}}` placeholders
 * (docs/api.md "Prompts": Mustache, no HTML escaping, a non-string value as JSON). Sections are
 * left as written: the console shows, it does not re-run.
 */
export function fillTemplate(template: string, variables: unknown): string {
  return template.replace(/\{\{\{?\s*([\w.]+)\s*\}?\}\}/g, (_, path: string) => asText(lookUp(variables, path)));
}

const objectOf = (v: unknown): Record<string, unknown> =>
  v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

type TemplateRow = { role: string; content?: string };

/** A template's messages filled with `variables`: the run's own at the first placeholder, else after it (api.md "Chat prompts"). */
function filledMessages(template: TemplateRow[], variables: unknown, own: Message[], step?: string): Message[] {
  const messages: Message[] = [];
  let placed = false;
  for (const m of template) {
    if (m.role !== "placeholder")
      messages.push({ role: m.role, content: fillTemplate(m.content ?? "", variables), step });
    else if (!placed) {
      messages.push(...own);
      placed = true;
    }
  }
  return placed ? messages : [...messages, ...own];
}

/** An unsaved version's template as its run keeps it (input.draft): its messages, else its system and developer prompts. */
function draftTemplate(draft: Record<string, unknown>): TemplateRow[] {
  if (Array.isArray(draft.messages) && draft.messages.length > 0) {
    return draft.messages.map((m) => ({ role: asText(objectOf(m).role), content: asText(objectOf(m).content) }));
  }
  const rows: TemplateRow[] = [{ role: "system", content: asText(draft.systemPrompt) }];
  if (typeof draft.developerPrompt === "string" && draft.developerPrompt)
    rows.push({ role: "developer", content: draft.developerPrompt });
  return rows;
}

/** The messages of one prompt version filled with `variables`. */
async function promptMessages(
  kiln: Kiln,
  promptId: string,
  versionId: string,
  variables: unknown,
  step?: string,
  own: Message[] = [],
) {
  const prompt = await kiln.prompts.get(promptId, { versionId });
  const v = prompt.version;
  if (!v) return own;
  return filledMessages(v.messages, variables, own, step);
}

/** What the run sent the model: its prompt versions' templates filled with the run's variables. */
async function messagesOf(kiln: Kiln, run: Run): Promise<Message[]> {
  const input = objectOf(run.input);
  if (run.kind === "judge") {
    return [
      { role: "system", content: asText(input.system) },
      { role: "user", content: asText(input.user) },
    ];
  }
  if (run.kind === "model") {
    // A model run sent the caller's messages as they are.
    return (Array.isArray(input.messages) ? input.messages : []).map((m) => ({
      role: asText(objectOf(m).role),
      content: asText(objectOf(m).content),
    }));
  }
  if (run.kind === "prompt") {
    const own = (Array.isArray(input.messages) ? input.messages : []).map((m) => ({
      role: asText(objectOf(m).role),
      content: asText(objectOf(m).content),
    }));
    // A run of an unsaved version keeps its template in input.draft (api.md "Runs").
    if (run.promptVersionId === "" && input.draft !== undefined) {
      return filledMessages(draftTemplate(objectOf(input.draft)), input.variables, own);
    }
    return promptMessages(kiln, run.promptId, run.promptVersionId, input.variables ?? input, undefined, own);
  }
  if (run.kind === "skill") {
    const steps = await Promise.all(
      run.steps.map((s) => promptMessages(kiln, s.promptId, s.promptVersionId, s.input, s.stepId)),
    );
    return steps.flat();
  }
  return [];
}

/** The rendered messages of a prompt, skill or judge run (an agent run's are on its steps' runs). */
export function RenderedMessages({ kiln, run }: { kiln: Kiln; run: Run }) {
  const [messages, setMessages] = useState<Message[] | null>(null);
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    messagesOf(kiln, run).then(setMessages, () => setFailed(true));
  }, [kiln, run]);
  if (run.kind === "agent") return <p>Each step's messages are on the step's run (the links in the steps table).</p>;
  if (failed) return <p>The prompt version of this run cannot be read.</p>;
  if (!messages) return <p role="status">Rendering the messages…</p>;
  return <MessageList messages={messages} />;
}

/** Messages as a run sent them, in order, each with its role (and skill step). */
export function MessageList({ messages }: { messages: { role: string; content: string; step?: string | null }[] }) {
  return (
    <ol className="messages">
      {messages.map((m, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: the messages of one run, in order
        <li key={i} className="message">
          <span className="role">
            {m.role}
            {m.step ? ` · step ${m.step}` : ""}
          </span>
          <pre>{m.content}</pre>
        </li>
      ))}
    </ol>
  );
}
