/**
 * Messages as spans carry them, in any of the conventions' shapes (docs/observability.md
 * "Mapping"): GenAI `{ role, parts: [{ type: "text", content }, { type: "tool_call", ... }] }`,
 * OpenAI-style `{ role, content, tool_calls }`, or a bare string. Shown as roles, texts and tool calls.
 */

type Part = { text: string } | { call: string; arguments: string };

interface Shown {
  role: string;
  /** The message's texts and tool calls, in the message's order. */
  parts: Part[];
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);
const asText = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v, null, 2));

function callOf(v: unknown): Part | null {
  if (!isObject(v)) return null;
  const fn = isObject(v.function) ? v.function : {};
  const name = v.name ?? fn.name ?? v.toolName;
  if (typeof name !== "string") return null;
  const args = v.arguments ?? fn.arguments ?? v.input ?? v.args;
  return { call: name, arguments: args === undefined ? "" : asText(args) };
}

/** One part of a message's content: its text, or a tool call, or the part as JSON. */
function addPart(shown: Shown, part: unknown) {
  if (!isObject(part)) {
    if (part !== null && part !== undefined) shown.parts.push({ text: asText(part) });
    return;
  }
  if (part.type === "tool_call" || part.type === "tool-call" || part.type === "function") {
    const call = callOf(part);
    if (call) return void shown.parts.push(call);
  }
  const text = part.content ?? part.text ?? part.response ?? part.result;
  shown.parts.push({ text: text === undefined ? asText(part) : asText(text) });
}

export function shownMessage(m: unknown, fallbackRole: string): Shown {
  const shown: Shown = { role: fallbackRole, parts: [] };
  if (!isObject(m)) {
    addPart(shown, m);
    return shown;
  }
  if (typeof m.role === "string") shown.role = m.role;
  const body = m.parts ?? m.content ?? m.message;
  for (const part of Array.isArray(body) ? body : body === undefined ? [] : [body]) addPart(shown, part);
  for (const c of Array.isArray(m.tool_calls) ? m.tool_calls : []) {
    const call = callOf(c);
    if (call) shown.parts.push(call);
  }
  return shown;
}

/** A list of messages (or one value: a root's input as a string), each with its role, texts and tool calls. */
export function Messages({ value, defaultRole, label }: { value: unknown; defaultRole: string; label: string }) {
  if (value === null || value === undefined) return null;
  const list = Array.isArray(value) ? value : [value];
  if (list.length === 0) return null;
  return (
    <ol className="messages" aria-label={label}>
      {list.map((m, i) => {
        const shown = shownMessage(m, defaultRole);
        return (
          // biome-ignore lint/suspicious/noArrayIndexKey: the messages of one span, in order
          <li key={i} className={`message role-${shown.role}`}>
            <span className="role">{shown.role}</span>
            {shown.parts.map((p, j) =>
              "text" in p ? (
                // biome-ignore lint/suspicious/noArrayIndexKey: the parts of one message, in order
                <pre key={j}>{p.text}</pre>
              ) : (
                // biome-ignore lint/suspicious/noArrayIndexKey: the parts of one message, in order
                <div key={j} className="tool-call">
                  <span className="tool-call-name">
                    calls <code>{p.call}</code>
                  </span>
                  {p.arguments && <pre>{p.arguments}</pre>}
                </div>
              ),
            )}
          </li>
        );
      })}
    </ol>
  );
}
