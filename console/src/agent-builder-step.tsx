import type { Workflow } from "@kiln/sdk";
import { BranchEditor } from "./agent-builder-branches.js";
import { IssueText, MappingRow, Pick, type ShownIssue } from "./agent-builder-fields.js";
import { Field } from "./ui.js";
import { firstBranch, setBranches } from "./workflow-branches.js";
import {
  moveStep,
  placeOf,
  REF_KEYS,
  removeStep,
  renameStep,
  type Step,
  setMapping,
  setNext,
  updateStep,
} from "./workflow-model.js";
import { type Source, sourceOf, TYPE_NAMES } from "./workflow-sources.js";

/** The "after" choice that turns a step's `next` into conditional branches (not a step id: ids have no space). */
const BRANCH = "branch on conditions";

/** The findings about one step, by the part of it they concern. */
function sorted(issues: ShownIssue[], index: number) {
  const at = { id: [] as ShownIssue[], ref: [] as ShownIssue[], next: [] as ShownIssue[], step: [] as ShownIssue[] };
  const inputs = new Map<string, ShownIssue[]>();
  for (const i of issues) {
    const place = placeOf(i.path);
    if (!("step" in place) || place.step !== index) continue;
    if (place.field === "input" && place.name) inputs.set(place.name, [...(inputs.get(place.name) ?? []), i]);
    else if (place.field === "input") at.step.push(i);
    else at[place.field].push(i);
  }
  return { ...at, inputs };
}

/**
 * One step of the workflow: what it runs (picked by name), its id, its inputs as forms, what
 * comes after it, and the buttons that move or remove it; each finding shown at its field.
 */
export function StepCard({
  workflow,
  index,
  sources,
  issues,
  onChange,
}: {
  workflow: Workflow;
  index: number;
  sources: Source[];
  issues: ShownIssue[];
  onChange: (w: Workflow) => void;
}) {
  const step = workflow.steps[index] as Step;
  const ref = step.ref as Record<string, string | undefined>;
  const keys = REF_KEYS[step.type];
  const source = sourceOf(sources, step.type, ref);
  const at = sorted(issues, index);
  const names = [
    ...(source?.fields.map((f) => f.name) ?? []),
    ...Object.keys(step.input ?? {}).filter((n) => !source?.fields.some((f) => f.name === n)),
  ];
  const typeOf = (name: string) => source?.fields.find((f) => f.name === name)?.type;
  const setRef = (patch: Record<string, string | undefined>) =>
    onChange(
      updateStep(workflow, index, (s) => ({
        ...s,
        ref: Object.fromEntries(Object.entries({ ...s.ref, ...patch }).filter(([, v]) => v !== undefined)),
      })),
    );
  const title = `Step ${index + 1}: ${step.id}`;
  /** Moves the step, and keeps the keyboard's focus on the button that moved it (or its twin at an end). */
  const move = (delta: number) => {
    onChange(moveStep(workflow, index, delta));
    const to = index + delta;
    requestAnimationFrame(() => {
      const buttons = [delta < 0 ? "up" : "down", delta < 0 ? "down" : "up"].map((d) =>
        document.querySelector<HTMLButtonElement>(`[data-move="${to}:${d}"]`),
      );
      buttons.find((b) => b && !b.disabled)?.focus();
    });
  };
  const last = workflow.steps.length - 1;
  const branches = Array.isArray(step.next);
  const bad = issues.some((i) => {
    const place = placeOf(i.path);
    return i.severity === "error" && "step" in place && place.step === index;
  });
  return (
    <li className={bad ? "wf-step wf-step-bad" : "wf-step"}>
      <fieldset aria-label={title}>
        <legend>
          <span className="wf-step-number">{index + 1}</span> {step.id}{" "}
          <span className="wf-step-kind">
            {TYPE_NAMES[step.type]}: {source?.name ?? "not found"}
          </span>
        </legend>
        <div className="wf-step-actions">
          <button
            type="button"
            className="secondary"
            disabled={index === 0}
            data-move={`${index}:up`}
            aria-label={`Move ${step.id} up`}
            onClick={() => move(-1)}
          >
            ↑ Up
          </button>
          <button
            type="button"
            className="secondary"
            disabled={index === last}
            data-move={`${index}:down`}
            aria-label={`Move ${step.id} down`}
            onClick={() => move(1)}
          >
            ↓ Down
          </button>
          <button
            type="button"
            className="secondary danger"
            aria-label={`Remove ${step.id}`}
            onClick={() => onChange(removeStep(workflow, index))}
          >
            Remove
          </button>
        </div>
        <IssueText issues={at.step} />
        <div className="wf-step-head">
          <Field
            label="Step id"
            value={step.id}
            onChange={(id) => onChange(renameStep(workflow, index, id))}
            issue={at.id.map((i) => i.message).join("; ") || undefined}
          />
          <Pick
            label={TYPE_NAMES[step.type]}
            value={ref[keys.id] ?? ""}
            onChange={(id) => setRef({ [keys.id]: id, [keys.version]: undefined })}
            issues={at.ref}
          >
            {!source && <option value={ref[keys.id] ?? ""}>{ref[keys.id] ? "(not found)" : "choose…"}</option>}
            {sources
              .filter((s) => s.type === step.type)
              .map((s) => (
                <option key={s.id} value={s.id}>
                  {s.name}
                  {s.runnable ? "" : " (not published)"}
                </option>
              ))}
          </Pick>
          {step.type !== "tool" && (
            <Pick
              label="Version"
              value={ref[keys.version] ?? ""}
              onChange={(v) => setRef({ [keys.version]: v === "" ? undefined : v })}
            >
              <option value="">The live one, pinned on publish</option>
              {(source?.versions ?? []).map((v) => (
                <option key={v.id} value={v.id}>
                  Version {v.version}
                </option>
              ))}
            </Pick>
          )}
        </div>
        <fieldset className="wf-inputs">
          <legend>Inputs of {step.id}</legend>
          {names.length === 0 && <p className="hint">{source ? "It takes no input." : "Pick what the step runs."}</p>}
          {names.map((name) => (
            <MappingRow
              key={name}
              name={name}
              required={source?.fields.some((f) => f.name === name && f.required) ?? false}
              value={step.input?.[name]}
              workflow={workflow}
              index={index}
              issues={at.inputs.get(name) ?? []}
              onChange={(m) => onChange(setMapping(workflow, index, name, m, typeOf(name)))}
            />
          ))}
        </fieldset>
        {branches ? (
          <BranchEditor workflow={workflow} index={index} issues={at.next} onChange={onChange} />
        ) : (
          <Pick
            label={`After ${step.id}`}
            value={typeof step.next === "string" ? step.next : ""}
            onChange={(next) =>
              onChange(
                next === BRANCH
                  ? setBranches(workflow, index, [firstBranch(workflow, index)])
                  : setNext(workflow, index, next),
              )
            }
            issues={at.next}
          >
            <option value="">End the run</option>
            <option value={BRANCH}>Branch on conditions…</option>
            {workflow.steps
              .filter((s) => s.id !== step.id)
              .map((s) => (
                <option key={s.id} value={s.id}>
                  Go to {s.id}
                </option>
              ))}
          </Pick>
        )}
      </fieldset>
    </li>
  );
}
