import type { Workflow } from "@kiln/sdk";
import { type ReactNode, useId } from "react";
import { Field } from "./ui.js";
import { inputNames, type Mapping, mappingOf, type Step } from "./workflow-model.js";

/** A validation finding as the builder shows it, at the field it concerns. */
export interface ShownIssue {
  path: string;
  code: string;
  message: string;
  severity: "error" | "warning";
}

/** The findings, one line each: "error: … (code)". */
export function IssueText({ issues, id }: { issues: ShownIssue[]; id?: string }) {
  if (issues.length === 0) return null;
  return (
    <ul className="wf-issues" id={id}>
      {issues.map((i) => (
        <li key={`${i.path}${i.code}${i.message}`} className={`wf-${i.severity}`}>
          {i.severity === "error" ? "Error" : "Warning"}: {i.message}
        </li>
      ))}
    </ul>
  );
}

/** A labelled select with the findings about it below, tied to it for assistive technology. */
export function Pick({
  label,
  value,
  onChange,
  issues = [],
  issuesId,
  children,
}: {
  label: string;
  value: string;
  onChange: (value: string) => void;
  issues?: ShownIssue[];
  /** Where the issues are shown when not below the select (the id of that element). */
  issuesId?: string;
  children: ReactNode;
}) {
  const id = useId();
  const bad = issues.length > 0;
  const describedBy = issuesId ?? `${id}-issues`;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select
        id={id}
        value={value}
        aria-invalid={bad || undefined}
        aria-describedby={bad ? describedBy : undefined}
        onChange={(e) => onChange(e.target.value)}
      >
        {children}
      </select>
      {!issuesId && <IssueText issues={issues} id={describedBy} />}
    </div>
  );
}

const SOURCES = [
  ["input", "Workflow input"],
  ["step", "Output of a step"],
  ["literal", "Fixed value"],
] as const;

/**
 * One input of a step as a form: where its value comes from (a workflow input, an earlier step's
 * output and a path in it, or a fixed value), or not set.
 */
export function MappingRow({
  name,
  required,
  value,
  workflow,
  index,
  issues,
  onChange,
}: {
  name: string;
  required: boolean;
  value: unknown;
  workflow: Workflow;
  index: number;
  issues: ShownIssue[];
  onChange: (m: Mapping | undefined) => void;
}) {
  const issuesId = useId();
  const m: Mapping | undefined = value === undefined ? undefined : mappingOf(value);
  const inputs = inputNames(workflow);
  const steps = workflow.steps.filter((_, i) => i !== index);
  const earlier = (s: Step) => workflow.steps.indexOf(s) < index;
  const start = (source: string): Mapping | undefined => {
    if (source === "input") return { source, field: inputs.includes(name) ? name : (inputs[0] ?? "") };
    if (source === "step") return { source, stepId: [...steps].reverse().find(earlier)?.id ?? "", path: "" };
    if (source === "literal") return { source, text: "" };
    return undefined;
  };
  return (
    <fieldset className="wf-mapping">
      <legend>
        {name}
        {required ? " (required)" : ""}
      </legend>
      <Pick
        label={`Source of ${name}`}
        value={m?.source ?? ""}
        onChange={(s) => onChange(start(s))}
        issues={issues}
        issuesId={issuesId}
      >
        <option value="">{required ? "choose…" : "not set"}</option>
        {SOURCES.map(([v, text]) => (
          <option key={v} value={v}>
            {text}
          </option>
        ))}
      </Pick>
      {m?.source === "input" && (
        <Pick label={`Workflow input for ${name}`} value={m.field} onChange={(field) => onChange({ ...m, field })}>
          {!inputs.includes(m.field) && <option value={m.field}>{m.field || "choose…"}</option>}
          {inputs.map((f) => (
            <option key={f} value={f}>
              {f}
            </option>
          ))}
        </Pick>
      )}
      {m?.source === "step" && (
        <>
          <Pick label={`Step for ${name}`} value={m.stepId} onChange={(stepId) => onChange({ ...m, stepId })}>
            {!steps.some((s) => s.id === m.stepId) && <option value={m.stepId}>{m.stepId || "choose…"}</option>}
            {steps.map((s) => (
              <option key={s.id} value={s.id}>
                {s.id}
                {earlier(s) ? "" : " (runs later)"}
              </option>
            ))}
          </Pick>
          <Field
            label={`Field of its output for ${name} (optional)`}
            value={m.path}
            onChange={(path) => onChange({ ...m, path: path.trim() })}
          />
        </>
      )}
      {m?.source === "literal" && (
        <Field label={`Value of ${name}`} value={m.text} onChange={(text) => onChange({ ...m, text })} />
      )}
      <div className="wf-mapping-issues">
        <IssueText issues={issues} id={issuesId} />
      </div>
    </fieldset>
  );
}
