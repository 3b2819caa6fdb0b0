import { useId, useState } from "react";
import { useAction } from "./action.js";
import { call, type Session } from "./api.js";
import { CopyButton, ErrorBox, Field } from "./ui.js";

/** What an MCP client needs (docs/mcp.md "Endpoint", scopes): prompts, skills and agents as tools, runs and reports. */
export const MCP_SCOPES = ["prompts:read", "skills:read", "agents:read", "runs:read", "runs:write", "evaluations:read"];
const KEY_PLACEHOLDER = "sk_your_api_key";

interface Setup {
  url: string;
  origin: string;
  key: string;
  labels: string;
}

interface ClientConfig {
  id: string;
  name: string;
  /** Where the text goes. */
  where: string;
  text: (s: Setup) => string;
}

const json = (value: unknown) => JSON.stringify(value, null, 2);
const bearer = (s: Setup) => `Bearer ${s.key}`;

/** The client configurations the page offers, each for the endpoint and key shown (docs/mcp.md "Client setup"). */
const CLIENTS: ClientConfig[] = [
  {
    id: "claude-code",
    name: "Claude Code",
    where: "Run in a terminal:",
    text: (s) => `claude mcp add --transport http kiln ${s.url} \\\n  --header "Authorization: ${bearer(s)}"`,
  },
  {
    id: "cursor",
    name: "Cursor, Windsurf",
    where: "Add to ~/.cursor/mcp.json (Windsurf: ~/.codeium/windsurf/mcp_config.json):",
    text: (s) => json({ mcpServers: { kiln: { url: s.url, headers: { Authorization: bearer(s) } } } }),
  },
  {
    id: "vscode",
    name: "VS Code",
    where: "Add to .vscode/mcp.json in your workspace:",
    text: (s) => json({ servers: { kiln: { type: "http", url: s.url, headers: { Authorization: bearer(s) } } } }),
  },
  {
    id: "claude-desktop",
    name: "Claude Desktop",
    where: "Add to claude_desktop_config.json (Settings, Developer, Edit config); needs Node.js for npx:",
    text: (s) =>
      json({
        mcpServers: {
          kiln: {
            command: "npx",
            // mcp-remote expands ${KILN_AUTH} itself (a space inside args breaks some clients on Windows).
            // biome-ignore lint/suspicious/noTemplateCurlyInString: the literal text mcp-remote reads
            args: ["-y", "mcp-remote", s.url, "--header", "Authorization:${KILN_AUTH}"],
            env: { KILN_AUTH: bearer(s) },
          },
        },
      }),
  },
  {
    id: "stdio",
    name: "Local process (stdio)",
    where: "For a client that starts a local process, from a Kiln checkout (pnpm kiln mcp relays to this gateway):",
    text: (s) =>
      json({
        mcpServers: {
          kiln: {
            command: "pnpm",
            args: ["--dir", "/path/to/kiln", "kiln", "mcp"],
            env: {
              KILN_URL: s.origin,
              KILN_API_KEY: s.key,
              ...(s.labels ? { KILN_MCP_LABELS: s.labels } : {}),
            },
          },
        },
      }),
  },
];

/** Labels as the endpoint's `labels` parameter takes them: comma-separated, no blanks. */
const labelsOf = (text: string) =>
  text
    .split(",")
    .map((l) => l.trim())
    .filter((l) => l !== "")
    .join(",");

/** The MCP endpoint (docs/mcp.md) and a ready-to-copy configuration for common clients, with a key made here. */
export function McpSetup({ session }: { session: Session }) {
  const [key, setKey] = useState("");
  const [created, setCreated] = useState(false);
  const [labels, setLabels] = useState("");
  const [client, setClient] = useState(CLIENTS[0]?.id ?? "");
  const { error, submit, busy } = useAction();
  const pickerId = useId();
  const chosenLabels = labelsOf(labels);
  const setup: Setup = {
    origin: location.origin,
    url: `${location.origin}/mcp${chosenLabels ? `?labels=${encodeURIComponent(chosenLabels)}` : ""}`,
    key: key.trim() || KEY_PLACEHOLDER,
    labels: chosenLabels,
  };
  const chosen = CLIENTS.find((c) => c.id === client) ?? CLIENTS[0];
  const createKey = submit(async () => {
    const body = { organizationId: session.organizationId, name: "MCP client", scopes: MCP_SCOPES };
    const r = await call<{ key: string }>("POST", "/api/api-keys", body);
    setKey(r.key);
    setCreated(true);
  });
  return (
    <main className="mcp">
      <h1>MCP</h1>
      <p className="hint">
        Any MCP client (an IDE assistant, an agent framework) can use this organization's published prompts and call its
        skills and agents as tools; every call is a stored run.
      </p>
      <section className="card" aria-labelledby={`${pickerId}-endpoint`}>
        <h2 id={`${pickerId}-endpoint`}>Endpoint</h2>
        <figure>
          <figcaption>
            Streamable HTTP, authenticated with an API key (<code>Authorization: Bearer</code>):
          </figcaption>
          <pre className="mcp-code">{setup.url}</pre>
        </figure>
        <CopyButton key={setup.url} text={setup.url} what="endpoint URL" />
        <Field
          label="Prompt labels to offer as name@label (optional, comma-separated)"
          value={labels}
          onChange={setLabels}
        />
      </section>
      <form className="card" onSubmit={createKey} aria-labelledby={`${pickerId}-key`}>
        <h2 id={`${pickerId}-key`}>API key</h2>
        <p className="hint">
          A key with the scopes MCP uses ({MCP_SCOPES.join(", ")}); its scopes decide what the client sees and calls.
        </p>
        <button type="submit" disabled={busy}>
          Create a key for MCP
        </button>
        <ErrorBox error={error} />
        {created && <p role="status">The key is in the configuration below: copy it now, it is shown once.</p>}
        <Field label="Or paste an existing API key" value={key} onChange={setKey} autoComplete="off" />
      </form>
      <section className="card" aria-labelledby={`${pickerId}-config`}>
        <h2 id={`${pickerId}-config`}>Client configuration</h2>
        <fieldset className="mcp-clients">
          <legend>Client</legend>
          {CLIENTS.map((c) => (
            <label key={c.id} className="check">
              <input type="radio" name="mcp-client" checked={c.id === chosen?.id} onChange={() => setClient(c.id)} />
              {c.name}
            </label>
          ))}
        </fieldset>
        {chosen && (
          <>
            <figure>
              <figcaption>{chosen.where}</figcaption>
              <pre className="mcp-code">{chosen.text(setup)}</pre>
            </figure>
            <CopyButton key={chosen.text(setup)} text={chosen.text(setup)} what="configuration" />
          </>
        )}
      </section>
    </main>
  );
}
