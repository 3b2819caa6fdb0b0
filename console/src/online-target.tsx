import type { Kiln } from "@kiln/sdk";
import { useEffect, useState } from "react";
import { Field, SelectField } from "./ui.js";

/** What an online rule samples, as the form edits it: ids are picked from lists, never typed. */
export interface TargetDraft {
  kind: "prompt" | "skill" | "agent" | "traces";
  id: string;
  label: string;
  name: string;
  model: string;
  sessionId: string;
}

export const NO_TARGET: TargetDraft = { kind: "prompt", id: "", label: "", name: "", model: "", sessionId: "" };

type Family = "prompt" | "skill" | "agent";
type Named = { id: string; name: string };

/** The organization's prompts, skills and agents by kind, read through the SDK's pagination. */
export function useTargets(kiln: Kiln, organizationId: string | undefined): Record<Family, Named[]> | null {
  const [targets, setTargets] = useState<Record<Family, Named[]> | null>(null);
  useEffect(() => {
    const query = { organizationId, limit: 200 };
    const names = async (list: AsyncIterable<Named>) => {
      const out: Named[] = [];
      for await (const item of list) out.push({ id: item.id, name: item.name });
      return out;
    };
    Promise.all([names(kiln.prompts.list(query)), names(kiln.skills.list(query)), names(kiln.agents.list(query))]).then(
      ([prompt, skill, agent]) => setTargets({ prompt, skill, agent }),
      () => setTargets({ prompt: [], skill: [], agent: [] }),
    );
  }, [kiln, organizationId]);
  return targets;
}

/** The labels of the picked prompt, skill or agent (a rule may name one, or none: every run). */
function useLabelNames(kiln: Kiln, draft: TargetDraft): string[] {
  const [labels, setLabels] = useState<string[]>([]);
  useEffect(() => {
    setLabels([]);
    if (draft.kind === "traces" || draft.id === "") return;
    const family = { prompt: kiln.prompts, skill: kiln.skills, agent: kiln.agents }[draft.kind];
    family.labels.list(draft.id).then(
      (ls) => setLabels(ls.map((l) => l.label)),
      () => setLabels([]),
    );
  }, [kiln, draft.kind, draft.id]);
  return labels;
}

/** The target's fields: a kind, then a prompt, skill or agent and its label; or a trace filter. */
export function TargetFields({
  kiln,
  targets,
  draft,
  onChange,
}: {
  kiln: Kiln;
  targets: Record<Family, Named[]>;
  draft: TargetDraft;
  onChange: (draft: TargetDraft) => void;
}) {
  const labels = useLabelNames(kiln, draft);
  const set = (patch: Partial<TargetDraft>) => onChange({ ...draft, ...patch });
  return (
    <fieldset>
      <legend>What it samples</legend>
      <SelectField
        id="online-target-kind"
        label="Sample"
        value={draft.kind}
        onChange={(kind) => onChange({ ...NO_TARGET, kind: kind as TargetDraft["kind"] })}
      >
        <option value="prompt">runs of a prompt</option>
        <option value="skill">runs of a skill</option>
        <option value="agent">runs of an agent</option>
        <option value="traces">ingested generations (traces)</option>
      </SelectField>
      {draft.kind === "traces" ? (
        <>
          <Field label="Span name (optional)" value={draft.name} onChange={(name) => set({ name })} />
          <Field label="Model (optional)" value={draft.model} onChange={(model) => set({ model })} />
          <Field label="Session id (optional)" value={draft.sessionId} onChange={(sessionId) => set({ sessionId })} />
        </>
      ) : (
        <>
          <SelectField
            id="online-target-id"
            label={`The ${draft.kind}`}
            value={draft.id}
            onChange={(id) => set({ id, label: "" })}
          >
            <option value="">Choose a {draft.kind}…</option>
            {targets[draft.kind].map((t) => (
              <option key={t.id} value={t.id}>
                {t.name}
              </option>
            ))}
          </SelectField>
          <SelectField id="online-target-label" label="Label" value={draft.label} onChange={(label) => set({ label })}>
            <option value="">any run</option>
            {labels.map((l) => (
              <option key={l} value={l}>
                only runs through {l}
              </option>
            ))}
          </SelectField>
        </>
      )}
    </fieldset>
  );
}

/** The target as the API takes it. */
export function targetOf(d: TargetDraft) {
  if (d.kind === "traces") {
    const filter: Record<string, string> = {};
    if (d.name) filter.name = d.name;
    if (d.model) filter.model = d.model;
    if (d.sessionId) filter.sessionId = d.sessionId;
    return { kind: d.kind, filter };
  }
  return { kind: d.kind, id: d.id, ...(d.label && { label: d.label }) };
}
