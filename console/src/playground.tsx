import type { Kiln, Prompt } from "@kiln/sdk";
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

interface RunShown {
  id: string;
  status: string;
  model: string | null;
  usage: { inputTokens: number; outputTokens: number };
  estimatedCostUsd: number | null;
  latencyMs: number;
  toolCallCount: number;
  output: { text: string } | null;
  error?: { message: string };
}

interface Target {
  key: string;
  kind: "prompt" | "skill";
  id: string;
  name: string;
  versions: { id: string; version: number; status: string }[];
  publishedVersionId: string | null;
}

/** Pick a prompt or skill and one of its versions, fill its variables, run; the session's runs stay listed. */
export function Playground({ kiln, session }: { kiln: Kiln; session: Session }) {
  const [targets, setTargets] = useState<Target[] | null>(null);
  const [key, setKey] = useState("");
  const [versionId, setVersionId] = useState("");
  const [schema, setSchema] = useState<unknown>(null);
  const [values, setValues] = useState<Record<string, string>>({});
  const [running, setRunning] = useState(false);
  const [runs, setRuns] = useState<RunShown[]>([]);
  const [error, setError] = useState<ShownError | null>(null);
  useEffect(() => {
    const org = session.organizationId;
    Promise.all([
      kiln.prompts.list({ organizationId: org, limit: 200 }),
      kiln.skills.list({ organizationId: org, limit: 200 }),
    ])
      .then(([prompts, skills]) => {
        const all: Target[] = [
          ...prompts.data
            .filter((p: Prompt) => p.versions.length > 0)
            .map((p: Prompt) => ({
              key: `prompt:${p.id}`,
              kind: "prompt" as const,
              id: p.id,
              name: p.name,
              versions: p.versions,
              publishedVersionId: p.publishedVersionId,
            })),
          ...skills.data
            .filter((s) => s.versions.length > 0)
            .map((s) => ({
              key: `skill:${s.id}`,
              kind: "skill" as const,
              id: s.id,
              name: s.name,
              versions: s.versions,
              publishedVersionId: s.publishedVersionId,
            })),
        ];
        setTargets(all);
        const first = all.find((t) => t.publishedVersionId) ?? all[0];
        setKey((k) => k || first?.key || "");
        setVersionId((v) => v || first?.publishedVersionId || first?.versions.at(-1)?.id || "");
      })
      .catch((e) => setError(errorOf(e)));
  }, [kiln, session.organizationId]);
  const target = targets?.find((t) => t.key === key);
  useEffect(() => {
    if (!target || !versionId) return;
    const read =
      target.kind === "prompt"
        ? kiln.prompts.get(target.id, { versionId }).then((p) => p.version?.variablesSchema)
        : kiln.skills.get(target.id, { versionId }).then((s) => s.inputSchema);
    read.then(setSchema).catch((e) => setError(errorOf(e)));
  }, [kiln, target, versionId]);
  const properties = useMemo(() => propertiesOf(schema), [schema]);
  async function run(e: FormEvent) {
    e.preventDefault();
    if (!target) return;
    setRunning(true);
    setError(null);
    try {
      const fields: Record<string, unknown> = {};
      for (const p of properties) {
        const v = variableValue(p, values[p.name] ?? "");
        if (v !== undefined && !(v === "" && !p.required)) fields[p.name] = v;
      }
      const organizationId = session.organizationId ?? "";
      const result: RunShown =
        target.kind === "prompt"
          ? await kiln.prompts.run(target.id, { organizationId, variables: fields, versionId })
          : await kiln.skills.run(target.id, { organizationId, input: fields, versionId });
      setRuns((rs) => [result, ...rs].slice(0, 20));
    } catch (err) {
      setError(errorOf(err));
    } finally {
      setRunning(false);
    }
  }
  if (targets === null)
    return <main>{error ? <ErrorBox error={error} /> : <Loading what="prompts and skills" />}</main>;
  return (
    <main>
      <h1>Playground</h1>
      {targets.length === 0 ? (
        <Empty>Create a prompt version first: the playground runs prompts and skills.</Empty>
      ) : (
        <div className="columns">
          <section className="card" aria-labelledby="run-form">
            <h2 id="run-form">Run a prompt or a skill</h2>
            <form onSubmit={run} noValidate>
              <div className="field">
                <label htmlFor="target-select">Prompt or skill</label>
                <select
                  id="target-select"
                  value={key}
                  onChange={(e) => {
                    const next = targets.find((t) => t.key === e.target.value);
                    setKey(e.target.value);
                    setVersionId(next?.publishedVersionId || next?.versions.at(-1)?.id || "");
                    setValues({});
                  }}
                >
                  <optgroup label="Prompts">
                    {targets
                      .filter((t) => t.kind === "prompt")
                      .map((t) => (
                        <option key={t.key} value={t.key}>
                          {t.name}
                        </option>
                      ))}
                  </optgroup>
                  <optgroup label="Skills">
                    {targets
                      .filter((t) => t.kind === "skill")
                      .map((t) => (
                        <option key={t.key} value={t.key}>
                          {t.name}
                        </option>
                      ))}
                  </optgroup>
                </select>
              </div>
              <div className="field">
                <label htmlFor="version-select">Version</label>
                <select id="version-select" value={versionId} onChange={(e) => setVersionId(e.target.value)}>
                  {[...(target?.versions ?? [])].reverse().map((v) => (
                    <option key={v.id} value={v.id}>
                      Version {v.version} ({v.id === target?.publishedVersionId ? "published" : v.status})
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
                  issue={error?.fields[`variables.${p.name}`] ?? error?.fields[`input.${p.name}`]}
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
