import type { Kiln, Label, Prompt, PromptVersion } from "@kiln/sdk";
import { useCallback, useState } from "react";
import { useAction, useLoaded } from "./action.js";
import { DataTable, ErrorBox, Field } from "./ui.js";
import { VersionPicker } from "./versioned.js";

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
  const { error, submit } = useAction();
  const compare = submit(async () => {
    const [a, b] = await Promise.all([
      kiln.prompts.get(prompt.id, { versionId: left }),
      kiln.prompts.get(prompt.id, { versionId: right }),
    ]);
    if (a.version && b.version) setPair([a.version, b.version]);
  });
  if (versions.length < 2) return null;
  return (
    <section className="card" aria-labelledby="compare">
      <h2 id="compare">Compare versions</h2>
      <form onSubmit={compare} className="columns">
        <VersionPicker id="compare-left" label="From" value={left} onChange={setLeft} versions={versions} />
        <VersionPicker id="compare-right" label="To" value={right} onChange={setRight} versions={versions} />
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
  const [label, setLabel] = useState("staging");
  const [versionId, setVersionId] = useState(prompt.versions.at(-1)?.id ?? "");
  const { error, setError, submit } = useAction();
  const read = useCallback(() => kiln.prompts.labels.list(prompt.id), [kiln, prompt.id]);
  const { value: labels, reload } = useLoaded<Label[]>(read, setError);
  const move = submit(async () => {
    await kiln.prompts.labels.set(prompt.id, label, versionId);
    reload();
    onMoved();
  });
  if (prompt.versions.length === 0) return null;
  return (
    <section className="card" aria-labelledby="labels">
      <h2 id="labels">Labels</h2>
      <ul>
        {(labels ?? []).map((l) => (
          <li key={l.label}>
            <strong>{l.label}</strong> → version {l.version}
            {l.protected ? " (protected)" : ""}
            {l.readOnly ? " (read-only)" : ""}
          </li>
        ))}
      </ul>
      <form onSubmit={move} noValidate>
        <Field label="Label" value={label} onChange={setLabel} issue={error?.fields.label} />
        <VersionPicker
          id="label-version"
          label="Version"
          value={versionId}
          onChange={setVersionId}
          versions={prompt.versions}
        />
        <ErrorBox error={error && !error.fields.label ? error : null} />
        <button type="submit">Move label</button>
      </form>
    </section>
  );
}
