import type { Kiln, Label, LabelMove, Prompt, PromptVersion } from "@kiln/sdk";
import { useState } from "react";
import { useAction } from "./action.js";
import { when } from "./prompt-versions.js";
import { isDeliberate, type Release } from "./release.js";
import { DataTable, ErrorBox, Field } from "./ui.js";
import { VersionPicker } from "./versioned.js";
import { TextChangeCells } from "./word-diff.js";

/** The fields of a version a person compares, as text. */
function fieldsOf(v: PromptVersion): [string, string][] {
  const template: [string, string][] = v.chat
    ? [
        [
          "Messages",
          v.messages.map((m) => (m.role === "placeholder" ? `[${m.name}]` : `${m.role}: ${m.content}`)).join("\n\n"),
        ],
      ]
    : [
        ["System prompt", v.systemPrompt],
        ["Developer prompt", v.developerPrompt ?? ""],
      ];
  return [
    ...template,
    ["Variables schema", JSON.stringify(v.variablesSchema, null, 2)],
    ["Response format", JSON.stringify(v.responseFormat)],
    ["Temperature", v.temperature === null ? "" : String(v.temperature)],
    ["Output token limit", v.maxOutputTokens === null ? "" : String(v.maxOutputTokens)],
    ["Cache answers for (seconds)", v.cacheTtlSeconds === null ? "" : String(v.cacheTtlSeconds)],
    ["Model", v.model ?? "default (the prompt's, else the deployment's)"],
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
    <section className="card compare" aria-labelledby="compare">
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
                {/* A changed field shows its words removed and added; an unchanged one as it is. */}
                <TextChangeCells before={before} after={after} marked={changed} />
              </tr>
            );
          })}
        </DataTable>
      )}
    </section>
  );
}

/**
 * The prompt's labels and where each has been; a form points one at a version. Moving a protected
 * label (production publishes) goes through `onRelease`, which asks first; another moves at once.
 */
export function Labels({
  kiln,
  prompt,
  labels,
  onRelease,
  onMoved,
}: {
  kiln: Kiln;
  prompt: Prompt;
  labels: Label[];
  onRelease: (release: Release) => void;
  onMoved: (label: Label) => void;
}) {
  const [label, setLabel] = useState("staging");
  const [versionId, setVersionId] = useState(prompt.versions.at(-1)?.id ?? "");
  const { error, submit } = useAction();
  const move = submit(async () => {
    const version = prompt.versions.find((v) => v.id === versionId)?.version ?? 0;
    if (isDeliberate(label, labels)) onRelease({ label, versionId, version });
    else onMoved(await kiln.prompts.labels.set(prompt.id, label, versionId));
  });
  if (prompt.versions.length === 0) return null;
  return (
    <section className="card" aria-labelledby="labels">
      <h2 id="labels">Labels</h2>
      <ul className="labels">
        {labels.map((l) => (
          <LabelItem key={l.label} kiln={kiln} promptId={prompt.id} label={l} />
        ))}
      </ul>
      <form onSubmit={move} noValidate>
        <Field label="Label" value={label} onChange={setLabel} issue={error?.fields.label} list="label-names" />
        <datalist id="label-names">
          {labels
            .filter((l) => !l.readOnly)
            .map((l) => (
              <option key={l.label} value={l.label} />
            ))}
        </datalist>
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

const ACTION: Record<LabelMove["action"], string> = { moved: "moved to", published: "published", deleted: "deleted" };

/** One label, where it points, and on demand where it has pointed (newest first). */
function LabelItem({ kiln, promptId, label: l }: { kiln: Kiln; promptId: string; label: Label }) {
  const [moves, setMoves] = useState<LabelMove[] | null>(null);
  const { error, act } = useAction();
  const toggle = () =>
    moves
      ? setMoves(null)
      : act(async () => setMoves((await kiln.prompts.labels.history(promptId, l.label, { limit: 20 })).data));
  return (
    <li>
      <strong>{l.label}</strong> → version {l.version}
      {l.protected ? " (protected)" : ""}
      {l.readOnly ? " (read-only)" : ""}{" "}
      {!l.readOnly && (
        <button type="button" className="link" aria-expanded={moves !== null} onClick={toggle}>
          History of {l.label}
        </button>
      )}
      <ErrorBox error={error} />
      {moves && (
        <ol className="history" aria-label={`History of ${l.label}`}>
          {moves.map((m) => (
            <li key={m.id}>
              {ACTION[m.action]}
              {m.version === null ? "" : ` version ${m.version}`} · {when(m.at)}
            </li>
          ))}
        </ol>
      )}
    </li>
  );
}
