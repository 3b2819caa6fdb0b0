import type { Kiln, Label, Prompt, PromptVersion } from "@kiln/sdk";
import { type FormEvent, useCallback, useEffect, useState } from "react";
import { errorOf, type ShownError } from "./api.js";
import { DataTable, ErrorBox, Field } from "./ui.js";

/** The fields of a version a person compares, as text. */
function fieldsOf(v: PromptVersion): [string, string][] {
  return [
    ["System prompt", v.systemPrompt],
    ["Developer prompt", v.developerPrompt ?? ""],
    ["Variables schema", JSON.stringify(v.variablesSchema, null, 2)],
    ["Response format", JSON.stringify(v.responseFormat)],
    ["Temperature", v.temperature === null ? "" : String(v.temperature)],
    ["Output token limit", v.maxOutputTokens === null ? "" : String(v.maxOutputTokens)],
    ["Model", v.model ?? ""],
    ["Tools", v.tools.map((t) => `${t.toolKey}@${t.toolVersionId}`).join(", ")],
  ];
}

/** Two versions side by side, the fields that differ marked. */
export function CompareVersions({ kiln, prompt }: { kiln: Kiln; prompt: Prompt }) {
  const versions = prompt.versions;
  const [left, setLeft] = useState(versions.at(-2)?.id ?? versions[0]?.id ?? "");
  const [right, setRight] = useState(versions.at(-1)?.id ?? "");
  const [pair, setPair] = useState<[PromptVersion, PromptVersion] | null>(null);
  const [error, setError] = useState<ShownError | null>(null);
  async function compare(e: FormEvent) {
    e.preventDefault();
    setError(null);
    try {
      const [a, b] = await Promise.all([
        kiln.prompts.get(prompt.id, { versionId: left }),
        kiln.prompts.get(prompt.id, { versionId: right }),
      ]);
      if (a.version && b.version) setPair([a.version, b.version]);
    } catch (err) {
      setError(errorOf(err));
    }
  }
  if (versions.length < 2) return null;
  const select = (id: string, label: string, value: string, set: (v: string) => void) => (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} value={value} onChange={(e) => set(e.target.value)}>
        {versions.map((v) => (
          <option key={v.id} value={v.id}>
            Version {v.version}
          </option>
        ))}
      </select>
    </div>
  );
  return (
    <section className="card" aria-labelledby="compare">
      <h2 id="compare">Compare versions</h2>
      <form onSubmit={compare} className="columns">
        {select("compare-left", "From", left, setLeft)}
        {select("compare-right", "To", right, setRight)}
        <div>
          <button type="submit">Compare</button>
        </div>
      </form>
      <ErrorBox error={error} />
      {pair && (
        <DataTable
          label="Version comparison"
          columns={["Field", `Version ${pair[0].version}`, `Version ${pair[1].version}`]}
        >
          {fieldsOf(pair[0]).map(([name, before], i) => {
            const after = fieldsOf(pair[1])[i]?.[1] ?? "";
            const changed = before !== after;
            return (
              <tr key={name} className={changed ? "changed" : undefined}>
                <th scope="row">
                  {name}
                  {changed ? " (changed)" : ""}
                </th>
                <td>
                  <pre className="output">{before}</pre>
                </td>
                <td>
                  <pre className="output">{after}</pre>
                </td>
              </tr>
            );
          })}
        </DataTable>
      )}
    </section>
  );
}

/** The prompt's labels; point one at a version (moving production publishes). */
export function Labels({ kiln, prompt, onMoved }: { kiln: Kiln; prompt: Prompt; onMoved: () => void }) {
  const [labels, setLabels] = useState<Label[]>([]);
  const [label, setLabel] = useState("staging");
  const [versionId, setVersionId] = useState(prompt.versions.at(-1)?.id ?? "");
  const [error, setError] = useState<ShownError | null>(null);
  const load = useCallback(() => {
    kiln.prompts.labels
      .list(prompt.id)
      .then(setLabels)
      .catch((e) => setError(errorOf(e)));
  }, [kiln, prompt.id]);
  useEffect(load, [load]);
  async function move(e: FormEvent) {
    e.preventDefault();
    setError(null);
    try {
      await kiln.prompts.labels.set(prompt.id, label, versionId);
      load();
      onMoved();
    } catch (err) {
      setError(errorOf(err));
    }
  }
  if (prompt.versions.length === 0) return null;
  return (
    <section className="card" aria-labelledby="labels">
      <h2 id="labels">Labels</h2>
      <ul>
        {labels.map((l) => (
          <li key={l.label}>
            <strong>{l.label}</strong> → version {l.version}
            {l.protected ? " (protected)" : ""}
            {l.readOnly ? " (read-only)" : ""}
          </li>
        ))}
      </ul>
      <form onSubmit={move} noValidate>
        <Field label="Label" value={label} onChange={setLabel} issue={error?.fields.label} />
        <div className="field">
          <label htmlFor="label-version">Version</label>
          <select id="label-version" value={versionId} onChange={(e) => setVersionId(e.target.value)}>
            {prompt.versions.map((v) => (
              <option key={v.id} value={v.id}>
                Version {v.version}
              </option>
            ))}
          </select>
        </div>
        <ErrorBox error={error && !error.fields.label ? error : null} />
        <button type="submit">Move label</button>
      </form>
    </section>
  );
}
