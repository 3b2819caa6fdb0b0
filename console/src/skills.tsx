import type { Prompt, Skill, SkillPreview, Tool } from "@kiln/sdk";
import { useCallback, useState } from "react";
import { useAction, useLoaded } from "./action.js";
import { errorOf } from "./api.js";
import { ConfirmButton } from "./confirm.js";
import { parseObject } from "./json-input.js";
import { type FamilyList, listPage } from "./resource-list.js";
import type { PageProps } from "./router.js";
import { Evaluations } from "./skill-evaluations.js";
import { ActButton, Empty, ErrorBox, Field, Pending, SelectField, ToolPicker } from "./ui.js";
import { type DiffFamily, DraftHeading, NewVersionButton, VersionDiffPanel } from "./versioned.js";

/** Skills of the organization: list, create, open. */
export const skillList: FamilyList<Skill> = {
  client: (kiln) => kiln.skills,
  noun: "skill",
  nameLabel: "Skill name",
  emptyText: "No skill yet: compose one from published prompts.",
};

const skillDiff: DiffFamily = {
  noun: "skill",
  diff: (kiln, id, versionId) => kiln.skills.diff(id, versionId),
};

export const SkillList = listPage(skillList);

/** One skill: the composition editor, preview, publish, run, and its evaluations. */
export function SkillDetail({ kiln, session, id, navigate }: PageProps & { id: string }) {
  const [adding, setAdding] = useState("");
  const [bindings, setBindings] = useState("");
  const [input, setInput] = useState("{}");
  const [preview, setPreview] = useState<SkillPreview | null>(null);
  const { error, setError, act } = useAction();
  // The preview's own error, shown by its button (never a stale result beside a new failure).
  const previewing = useAction();
  const read = useCallback(() => kiln.skills.get(id), [kiln, id]);
  const { value: skill, setValue: setSkill, reload } = useLoaded<Skill>(read, setError);
  const organizationId = session.organizationId;
  const readPrompts = useCallback(async () => {
    const page = await kiln.prompts.list({ organizationId, limit: 200 });
    const published = page.data.filter((p) => p.publishedVersionId);
    setAdding((a) => a || published[0]?.id || "");
    return published;
  }, [kiln, organizationId]);
  const prompts = useLoaded<Prompt[]>(readPrompts, setError).value ?? [];
  const readTools = useCallback(
    async () => (await kiln.tools.list({ organizationId, limit: 200 })).data,
    [kiln, organizationId],
  );
  const tools = useLoaded<Tool[]>(readTools, setError).value ?? [];
  if (!skill) return <Pending error={error} what="the skill" />;
  const steps = skill.promptComposition;
  const draft = skill.draftVersionId;
  type StepInput = { promptId: string; alias: string; variables?: Record<string, unknown> };
  const kept = (s: (typeof steps)[number]): StepInput => ({
    promptId: s.promptId,
    alias: s.alias,
    variables: s.variables,
  });
  const runPreview = async () => {
    setPreview(null);
    setPreview(await kiln.skills.preview(id, { organizationId, input: parseObject(input, "The input") }));
  };
  const replace = (prompts: StepInput[]) =>
    act(async () => {
      if (!draft) return;
      setSkill(await kiln.skills.replacePrompts(draft, { prompts }));
    });
  return (
    <main>
      <DraftHeading resource={skill} noDraft="No draft: create a new version to edit." error={error} />
      <div className="columns">
        <section className="card" aria-labelledby="composition">
          <h2 id="composition">Prompt composition</h2>
          {steps.length === 0 ? (
            <Empty>No step: add a published prompt.</Empty>
          ) : (
            <ol>
              {steps.map((s) => (
                <li key={s.alias}>
                  <strong>{s.alias}</strong>: {s.promptName} version {s.version}
                  <pre className="output">{JSON.stringify(s.variables)}</pre>
                  {draft && (
                    <button
                      type="button"
                      className="secondary"
                      onClick={() => replace(steps.filter((o) => o.alias !== s.alias).map(kept))}
                    >
                      Remove {s.alias}
                    </button>
                  )}
                </li>
              ))}
            </ol>
          )}
          {draft && (
            <form
              onSubmit={(e) => {
                e.preventDefault();
                let variables: Record<string, unknown> | undefined;
                try {
                  variables = bindings.trim() === "" ? undefined : parseObject(bindings, "The bindings");
                } catch (err) {
                  setError(errorOf(err));
                  return;
                }
                void replace([
                  ...steps.map(kept),
                  { promptId: adding, alias: `step${steps.length + 1}`, ...(variables ? { variables } : {}) },
                ]);
              }}
            >
              <SelectField id="add-prompt" label="Published prompt" value={adding} onChange={setAdding}>
                {prompts.map((p) => (
                  <option key={p.id} value={p.id}>
                    {p.name}
                  </option>
                ))}
              </SelectField>
              <Field
                label='Bindings (JSON, optional: {"variable": "{{input.x}}" or "{{steps.<alias>.output}}"})'
                value={bindings}
                onChange={setBindings}
              />
              <button type="submit" disabled={!adding}>
                Add step
              </button>
            </form>
          )}
          {draft && (
            <ToolPicker
              tools={tools}
              chosen={skill.tools.map((t) => t.toolId)}
              onChange={(ids) =>
                act(async () => {
                  setSkill(await kiln.skills.replaceTools(draft, { tools: ids }));
                })
              }
              legend="Skill tools (offered to every step)"
            />
          )}
          <h3>Input schema</h3>
          <pre className="output">{JSON.stringify(skill.inputSchema, null, 2)}</pre>
          <div>
            {draft && (
              <ConfirmButton
                act={act}
                run={async () => setSkill(await kiln.skills.publish(id))}
                question={`Publish the draft of ${skill.name}? It goes live: runs of ${skill.name} use it from now on.`}
                confirmLabel="Publish the draft"
              >
                Publish…
              </ConfirmButton>
            )}{" "}
            {!draft && <NewVersionButton act={act} create={() => kiln.skills.createVersion(id)} reload={reload} />}
          </div>
        </section>
        <section className="card" aria-labelledby="try">
          <h2 id="try">Preview</h2>
          <Field label="Skill input (JSON)" multiline rows={4} value={input} onChange={setInput} />
          <ActButton act={previewing.act} run={runPreview} disabled={previewing.busy}>
            Preview
          </ActButton>
          <ErrorBox error={previewing.error} />
          {preview && !previewing.busy && (
            <article aria-label="Preview output" className="card">
              <p>
                {preview.status} · {preview.usage.inputTokens} in / {preview.usage.outputTokens} out tokens ·{" "}
                {preview.latencyMs} ms
              </p>
              <pre className="output">{preview.output?.text ?? preview.error?.message ?? ""}</pre>
            </article>
          )}
        </section>
      </div>
      <VersionDiffPanel family={skillDiff} kiln={kiln} resource={skill} />
      <Evaluations kiln={kiln} session={session} skillId={id} navigate={navigate} inputSchema={skill.inputSchema} />
    </main>
  );
}
