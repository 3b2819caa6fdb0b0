import type { Kiln, Prompt, PromptRun } from "@kiln/sdk";
import { type FormEvent, useEffect, useMemo, useState } from "react";
import { errorOf, type Session, type ShownError } from "./api.js";
import { Empty, ErrorBox, Field, Loading } from "./ui.js";

interface Property {
  name: string;
  type: string;
  required: boolean;
}

/** The form fields a variables schema asks for (its top-level properties). */
function propertiesOf(schema: unknown): Property[] {
  const s = (schema ?? {}) as { properties?: Record<string, { type?: unknown }>; required?: string[] };
  return Object.entries(s.properties ?? {}).map(([name, p]) => ({
    name,
    type: typeof p?.type === "string" ? p.type : "string",
    required: (s.required ?? []).includes(name),
  }));
}

function variableValue(p: Property, text: string): unknown {
  if (p.type === "number" || p.type === "integer") return text === "" ? undefined : Number(text);
  if (p.type === "boolean") return text === "true";
  if (p.type === "object" || p.type === "array") {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return text;
}

/** Pick a published prompt, fill its variables, run; the session's runs stay listed. */
export function Playground({ kiln, session }: { kiln: Kiln; session: Session }) {
  const [prompts, setPrompts] = useState<Prompt[] | null>(null);
  const [promptId, setPromptId] = useState("");
  const [values, setValues] = useState<Record<string, string>>({});
  const [running, setRunning] = useState(false);
  const [runs, setRuns] = useState<PromptRun[]>([]);
  const [error, setError] = useState<ShownError | null>(null);
  useEffect(() => {
    kiln.prompts
      .list({ organizationId: session.organizationId, limit: 200 })
      .then((page) => {
        const runnable = page.data.filter((p) => p.publishedVersionId);
        setPrompts(runnable);
        setPromptId((current) => current || runnable[0]?.id || "");
      })
      .catch((e) => setError(errorOf(e)));
  }, [kiln, session.organizationId]);
  const prompt = prompts?.find((p) => p.id === promptId);
  const properties = useMemo(() => propertiesOf(prompt?.version?.variablesSchema), [prompt]);
  async function run(e: FormEvent) {
    e.preventDefault();
    if (!prompt) return;
    setRunning(true);
    setError(null);
    try {
      const variables: Record<string, unknown> = {};
      for (const p of properties) {
        const v = variableValue(p, values[p.name] ?? "");
        if (v !== undefined && !(v === "" && !p.required)) variables[p.name] = v;
      }
      const result = await kiln.prompts.run(prompt.id, { organizationId: session.organizationId ?? "", variables });
      setRuns((rs) => [result, ...rs].slice(0, 20));
    } catch (err) {
      setError(errorOf(err));
    } finally {
      setRunning(false);
    }
  }
  if (prompts === null) return <main>{error ? <ErrorBox error={error} /> : <Loading what="prompts" />}</main>;
  return (
    <main>
      <h1>Playground</h1>
      {prompts.length === 0 ? (
        <Empty>Publish a prompt version first: the playground runs published prompts.</Empty>
      ) : (
        <div className="columns">
          <section className="card" aria-labelledby="run-form">
            <h2 id="run-form">Run a prompt</h2>
            <form onSubmit={run} noValidate>
              <div className="field">
                <label htmlFor="prompt-select">Prompt</label>
                <select
                  id="prompt-select"
                  value={promptId}
                  onChange={(e) => {
                    setPromptId(e.target.value);
                    setValues({});
                  }}
                >
                  {prompts.map((p) => (
                    <option key={p.id} value={p.id}>
                      {p.name} (version {p.version?.version})
                    </option>
                  ))}
                </select>
              </div>
              {properties.map((p) => (
                <Field
                  key={p.name}
                  label={`${p.name}${p.required ? " (required)" : ""}`}
                  type={p.type === "number" || p.type === "integer" ? "number" : "text"}
                  value={values[p.name] ?? ""}
                  onChange={(v) => setValues((vs) => ({ ...vs, [p.name]: v }))}
                  issue={error?.fields[`variables.${p.name}`]}
                />
              ))}
              <ErrorBox error={error} />
              <button type="submit" disabled={running}>
                {running ? "Running…" : "Run"}
              </button>
              {running && (
                <p role="status" aria-live="polite">
                  The model is answering…
                </p>
              )}
            </form>
          </section>
          <section aria-labelledby="runs">
            <h2 id="runs">Runs of this session</h2>
            {runs.length === 0 ? (
              <Empty>No run yet.</Empty>
            ) : (
              runs.map((r) => (
                <article key={r.id} className="card" aria-label={`Run ${r.id}`}>
                  <p>
                    <strong>{r.status}</strong> · {r.model ?? "no model"} · {r.usage.inputTokens} in /{" "}
                    {r.usage.outputTokens} out tokens ·{" "}
                    {r.estimatedCostUsd === null ? "cost unknown" : `$${r.estimatedCostUsd}`} · {r.latencyMs} ms ·{" "}
                    {r.toolCallCount} tool call{r.toolCallCount === 1 ? "" : "s"}
                  </p>
                  <pre className="output">{r.output?.text ?? r.error?.message ?? ""}</pre>
                </article>
              ))
            )}
          </section>
        </div>
      )}
    </main>
  );
}
