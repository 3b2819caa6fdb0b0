import type { Workflow } from "@kiln/sdk";
import { useState } from "react";
import { IssueText, Pick, type ShownIssue } from "./agent-builder-fields.js";
import { StepCard } from "./agent-builder-step.js";
import { InputSchemaEditor } from "./agent-input-schema.js";
import { Field } from "./ui.js";
import type { Schema } from "./variables.js";
import { addStep, bindingOf, isChain, mappingOf, placeOf, type StepType } from "./workflow-model.js";
import { type Source, TYPE_NAMES } from "./workflow-sources.js";

const TYPES: StepType[] = ["prompt", "skill", "tool"];

/** The findings about a part of the workflow (not a step). */
const partIssues = (issues: ShownIssue[], parts: string[]) =>
  issues.filter((i) => {
    const place = placeOf(i.path);
    return "part" in place && parts.includes(place.part);
  });

/** Picks a prompt, skill or tool by name and adds a step that runs it. */
function AddStep({ sources, onAdd }: { sources: Source[]; onAdd: (s: Source) => void }) {
  const [picked, setPicked] = useState("");
  const source = sources.find((s) => `${s.type}:${s.id}` === picked);
  return (
    <div className="wf-add">
      <Pick label="Add a step that runs" value={picked} onChange={setPicked}>
        <option value="">choose a prompt, skill or tool…</option>
        {TYPES.map((type) => (
          <optgroup key={type} label={`${TYPE_NAMES[type]}s`}>
            {sources
              .filter((s) => s.type === type)
              .map((s) => (
                <option key={s.id} value={`${s.type}:${s.id}`}>
                  {s.name}
                  {s.runnable ? "" : " (not published)"}
                </option>
              ))}
          </optgroup>
        ))}
      </Pick>
      <button
        type="button"
        disabled={!source}
        onClick={() => {
          if (!source) return;
          onAdd(source);
          setPicked("");
        }}
      >
        Add step
      </button>
    </div>
  );
}

/** Which step's output the agent answers, and the field of it (optional). */
function OutputFields({
  workflow,
  issues,
  onChange,
}: {
  workflow: Workflow;
  issues: ShownIssue[];
  onChange: (w: Workflow) => void;
}) {
  const m = mappingOf(workflow.output);
  const stepId = m.source === "step" ? m.stepId : "";
  const path = m.source === "step" ? m.path : "";
  const set = (id: string, p: string) =>
    onChange({ ...workflow, output: id === "" ? "" : String(bindingOf({ source: "step", stepId: id, path: p })) });
  return (
    <section className="card" aria-labelledby="wf-output">
      <h3 id="wf-output">Output</h3>
      <div className="wf-step-head">
        <Pick label="The agent answers the output of" value={stepId} onChange={(id) => set(id, path)} issues={issues}>
          <option value="">choose a step…</option>
          {workflow.steps.map((s) => (
            <option key={s.id} value={s.id}>
              {s.id}
            </option>
          ))}
        </Pick>
        {stepId !== "" && (
          <Field label="Field of that output (optional)" value={path} onChange={(p) => set(stepId, p.trim())} />
        )}
      </div>
    </section>
  );
}

/**
 * The workflow builder: the inputs, the steps (added from pickers, moved, connected by input
 * mappings and transitions), the first step and the output; each finding of the validate route
 * shown at the step and field it concerns.
 */
export function WorkflowBuilder({
  workflow,
  sources,
  issues,
  onChange,
}: {
  workflow: Workflow;
  sources: Source[];
  issues: ShownIssue[];
  onChange: (w: Workflow) => void;
}) {
  const stepIssues = (index: number) =>
    issues.filter((i) => {
      const place = placeOf(i.path);
      return "step" in place && place.step === index;
    });
  const chain = isChain(workflow);
  return (
    <div className="wf-builder">
      <IssueText issues={partIssues(issues, ["workflow"])} />
      <InputSchemaEditor
        schema={workflow.inputSchema as Schema}
        onChange={(inputSchema) => onChange({ ...workflow, inputSchema })}
        issues={partIssues(issues, ["inputSchema"])}
      />
      <section className="card" aria-labelledby="wf-steps">
        <h3 id="wf-steps">Steps</h3>
        <p className="hint">
          {chain
            ? "The steps run from top to bottom; moving one keeps that order."
            : "The steps run from the first step, each followed by the step its “After” names."}
        </p>
        <IssueText issues={partIssues(issues, ["steps"])} />
        {!chain && (
          <Pick
            label="First step"
            value={workflow.entry}
            onChange={(entry) => onChange({ ...workflow, entry })}
            issues={partIssues(issues, ["entry"])}
          >
            {!workflow.steps.some((s) => s.id === workflow.entry) && <option value={workflow.entry}>choose…</option>}
            {workflow.steps.map((s) => (
              <option key={s.id} value={s.id}>
                {s.id}
              </option>
            ))}
          </Pick>
        )}
        {chain && <IssueText issues={partIssues(issues, ["entry"])} />}
        {workflow.steps.length === 0 ? (
          <p className="empty">No step yet: add the first one below.</p>
        ) : (
          <ol className="wf-steps">
            {workflow.steps.map((_s, i) => (
              <StepCard
                // biome-ignore lint/suspicious/noArrayIndexKey: a step's id changes as it is typed; its place is its identity here
                key={i}
                workflow={workflow}
                index={i}
                sources={sources}
                issues={stepIssues(i)}
                onChange={onChange}
              />
            ))}
          </ol>
        )}
        <AddStep sources={sources} onAdd={(s) => onChange(addStep(workflow, s.type, s.id, s.name))} />
      </section>
      <OutputFields workflow={workflow} issues={partIssues(issues, ["output"])} onChange={onChange} />
    </div>
  );
}
