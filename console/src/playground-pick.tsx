import type { Kiln, Model } from "@kiln/sdk";
import { useEffect, useState } from "react";
import { dollars } from "./model-picker.js";
import { SelectField } from "./ui.js";

/** A prompt or a skill the playground can run (one with a version). */
export interface Target {
  key: string;
  kind: "prompt" | "skill";
  id: string;
  name: string;
  versions: { id: string; version: number; status: string }[];
  publishedVersionId: string | null;
}

/** What runs on one side: a version (`v:<id>`) or a label (`l:<name>`), and a model override ("" for none). */
export interface Choice {
  selection: string;
  model: string;
}

export type LabelPointer = { label: string; versionId: string; version: number };

/** Every prompt and skill with a version, read through the SDK's pagination. */
export async function readTargets(kiln: Kiln, organizationId: string | undefined): Promise<Target[]> {
  const targets: Target[] = [];
  const add = (kind: Target["kind"], item: Omit<Target, "key" | "kind">) => {
    if (item.versions.length > 0) targets.push({ ...item, key: `${kind}:${item.id}`, kind });
  };
  const query = { organizationId, limit: 200 };
  for await (const p of kiln.prompts.list(query)) add("prompt", p);
  for await (const s of kiln.skills.list(query)) add("skill", s);
  return targets;
}

/** The labels of a prompt or skill (but `latest`, which a version already names). */
export function useLabels(kiln: Kiln, target: Target | undefined): LabelPointer[] {
  const [labels, setLabels] = useState<LabelPointer[]>([]);
  useEffect(() => {
    setLabels([]);
    if (!target) return;
    const family = target.kind === "prompt" ? kiln.prompts : kiln.skills;
    family.labels.list(target.id).then(
      (ls) => setLabels(ls.filter((l) => l.label !== "latest")),
      () => setLabels([]),
    );
  }, [kiln, target]);
  return labels;
}

/** The default selection: the published version, else the newest. */
export const defaultSelection = (t: Target | undefined) =>
  t ? `v:${t.publishedVersionId || t.versions.at(-1)?.id || ""}` : "";

/** The version a selection runs: the version, or the one its label points at. */
export function versionIdOf(selection: string, labels: LabelPointer[]): string {
  if (selection.startsWith("v:")) return selection.slice(2);
  return labels.find((l) => `l:${l.label}` === selection)?.versionId ?? "";
}

/** "Version 2" or "label staging (version 2)". */
export function describeSelection(target: Target, selection: string, labels: LabelPointer[]): string {
  if (selection.startsWith("l:")) {
    const l = labels.find((x) => `l:${x.label}` === selection);
    return `label ${selection.slice(2)}${l ? ` (version ${l.version})` : ""}`;
  }
  const v = target.versions.find((x) => x.id === selection.slice(2));
  return v ? `version ${v.version}` : "";
}

const price = (usd: number | null) => (usd === null ? "?" : dollars(usd));

/** A model as the picker lists it: its id and prices per million tokens, or that it is unavailable. */
export function modelOption(m: Model): string {
  if (!m.available) return `${m.id} (unavailable: no credentials)`;
  const { inputPerMTokUsd: i, outputPerMTokUsd: o } = m.pricing;
  return i === null && o === null ? `${m.id} (no price)` : `${m.id} (${price(i)} in / ${price(o)} out per 1M tokens)`;
}

/** The version-or-label select and the model override of one side of the playground. */
export function ChoiceFields({
  side,
  target,
  labels,
  models,
  routes = [],
  choice,
  onChange,
}: {
  side: string;
  target: Target;
  labels: LabelPointer[];
  models: Model[];
  /** The organization's routes, `route/<name>`. */
  routes?: string[];
  choice: Choice;
  onChange: (choice: Choice) => void;
}) {
  const suffix = side ? ` ${side}` : "";
  return (
    <>
      <SelectField
        id={`version-select${side}`}
        label={`Version${suffix}`}
        value={choice.selection}
        onChange={(selection) => onChange({ ...choice, selection })}
      >
        <optgroup label="Versions">
          {[...target.versions].reverse().map((v) => (
            <option key={v.id} value={`v:${v.id}`}>
              Version {v.version} ({v.id === target.publishedVersionId ? "published" : v.status})
            </option>
          ))}
        </optgroup>
        {labels.length > 0 && (
          <optgroup label="Labels">
            {labels.map((l) => (
              <option key={l.label} value={`l:${l.label}`}>
                Label {l.label} (version {l.version})
              </option>
            ))}
          </optgroup>
        )}
      </SelectField>
      {target.kind === "prompt" ? (
        <SelectField
          id={`model-select${side}`}
          label={`Model${suffix}`}
          value={choice.model}
          onChange={(model) => onChange({ ...choice, model })}
        >
          <option value="">The version's model</option>
          {models.map((m) => (
            <option key={m.id} value={m.id} disabled={!m.available}>
              {modelOption(m)}
            </option>
          ))}
          {routes.length > 0 && (
            <optgroup label="Routes">
              {routes.map((r) => (
                <option key={r} value={r}>
                  {r}
                </option>
              ))}
            </optgroup>
          )}
        </SelectField>
      ) : (
        <p className="hint">A skill runs each step with its prompt version's model.</p>
      )}
    </>
  );
}
