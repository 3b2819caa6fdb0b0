import type { Kiln } from "@kiln/sdk";
import { useCallback, useEffect, useMemo, useState } from "react";
import { useAction, useLoaded } from "./action.js";
import { errorOf, type Session } from "./api.js";
import { Empty, ErrorBox, Field, Pending, SelectField } from "./ui.js";
import { VersionPicker } from "./versioned.js";

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

const GROUPS = [
  { kind: "prompt", label: "Prompts" },
  { kind: "skill", label: "Skills" },
] as const;

/** The prompts or skills the playground can run: those with a version. */
function targetsOf(kind: Target["kind"], items: Omit<Target, "key" | "kind">[]): Target[] {
  return items
    .filter((item) => item.versions.length > 0)
    .map((item) => ({
      key: `${kind}:${item.id}`,
      kind,
      id: item.id,
      name: item.name,
      versions: item.versions,
      publishedVersionId: item.publishedVersionId,
    }));
}

/** Pick a prompt or skill and one of its versions, fill its variables, run; the session's runs stay listed. */
export function Playground({ kiln, session }: { kiln: Kiln; session: Session }) {
  const [key, setKey] = useState("");
  const [versionId, setVersionId] = useState("");
  const [schema, setSchema] = useState<unknown>(null);
  const [values, setValues] = useState<Record<string, string>>({});
  const [runs, setRuns] = useState<RunShown[]>([]);
  const { error, setError, submit, busy: running } = useAction();
  const organizationId = session.organizationId;
  const readTargets = useCallback(async () => {
    const [prompts, skills] = await Promise.all([
      kiln.prompts.list({ organizationId, limit: 200 }),
      kiln.skills.list({ organizationId, limit: 200 }),
    ]);
    const all = [...targetsOf("prompt", prompts.data), ...targetsOf("skill", skills.data)];
    const first = all.find((t) => t.publishedVersionId) ?? all[0];
    setKey((k) => k || first?.key || "");
    setVersionId((v) => v || first?.publishedVersionId || first?.versions.at(-1)?.id || "");
    return all;
  }, [kiln, organizationId]);
  const targets = useLoaded(readTargets, setError).value;
  const target = targets?.find((t) => t.key === key);
  useEffect(() => {
    if (!target || !versionId) return;
    const read =
      target.kind === "prompt"
        ? kiln.prompts.get(target.id, { versionId }).then((p) => p.version?.variablesSchema)
        : kiln.skills.get(target.id, { versionId }).then((s) => s.inputSchema);
    read.then(setSchema).catch((e) => setError(errorOf(e)));
  }, [kiln, target, versionId, setError]);
  const properties = useMemo(() => propertiesOf(schema), [schema]);
  const run = submit(async () => {
    if (!target) return;
    const fields: Record<string, unknown> = {};
    for (const p of properties) {
      const v = variableValue(p, values[p.name] ?? "");
      if (v !== undefined && !(v === "" && !p.required)) fields[p.name] = v;
    }
    const result: RunShown =
      target.kind === "prompt"
        ? await kiln.prompts.run(target.id, { organizationId: organizationId ?? "", variables: fields, versionId })
        : await kiln.skills.run(target.id, { organizationId: organizationId ?? "", input: fields, versionId });
    setRuns((rs) => [result, ...rs].slice(0, 20));
  });
  const pick = (nextKey: string) => {
    const next = targets?.find((t) => t.key === nextKey);
    setKey(nextKey);
    setVersionId(next?.publishedVersionId || next?.versions.at(-1)?.id || "");
    setValues({});
  };
  if (targets === null) return <Pending error={error} what="prompts and skills" />;
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
              <SelectField id="target-select" label="Prompt or skill" value={key} onChange={pick}>
                {GROUPS.map((group) => (
                  <optgroup key={group.kind} label={group.label}>
                    {targets
                      .filter((t) => t.kind === group.kind)
                      .map((t) => (
                        <option key={t.key} value={t.key}>
                          {t.name}
                        </option>
                      ))}
                  </optgroup>
                ))}
              </SelectField>
              <VersionPicker
                id="version-select"
                label="Version"
                value={versionId}
                onChange={setVersionId}
                versions={[...(target?.versions ?? [])].reverse()}
                describe={(v) =>
                  `Version ${v.version} (${v.id === target?.publishedVersionId ? "published" : v.status})`
                }
              />
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
