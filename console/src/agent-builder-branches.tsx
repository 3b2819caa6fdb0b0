import type { Workflow } from "@kiln/sdk";
import { useState } from "react";
import { IssueText, Pick, type ShownIssue } from "./agent-builder-fields.js";
import { Field } from "./ui.js";
import {
  type Branch,
  type BranchForm,
  branchesOf,
  branchFormOf,
  branchOf,
  joinVariable,
  OPERATORS,
  type Operator,
  setBranches,
  splitVariable,
  variablesOf,
} from "./workflow-branches.js";
import { type Step, setNext } from "./workflow-model.js";

/** The findings about branch `k` of the step (`steps[i].next[k]…`), and the rest about its `next`. */
function byBranch(issues: ShownIssue[]): { at: Map<number, ShownIssue[]>; rest: ShownIssue[] } {
  const at = new Map<number, ShownIssue[]>();
  const rest: ShownIssue[] = [];
  for (const i of issues) {
    const k = /\.next\[(\d+)\]/.exec(i.path)?.[1];
    if (k === undefined) rest.push(i);
    else at.set(Number(k), [...(at.get(Number(k)) ?? []), i]);
  }
  return { at, rest };
}

/** A condition the comparison form cannot show, as JSON text; kept as typed until it parses. */
function JsonCondition({ when, onChange, label }: { when: unknown; onChange: (w: unknown) => void; label: string }) {
  const [text, setText] = useState(() => JSON.stringify(when, null, 1));
  const [bad, setBad] = useState<string | undefined>();
  return (
    <Field
      label={label}
      multiline
      rows={3}
      value={text}
      issue={bad}
      onChange={(t) => {
        setText(t);
        try {
          onChange(JSON.parse(t));
          setBad(undefined);
        } catch {
          setBad("is not JSON yet: the last valid condition is kept");
        }
      }}
    />
  );
}

/** Step targets of a branch: every other step. */
function Targets({ workflow, step }: { workflow: Workflow; step: Step }) {
  return (
    <>
      {workflow.steps
        .filter((s) => s.id !== step.id)
        .map((s) => (
          <option key={s.id} value={s.id}>
            Go to {s.id}
          </option>
        ))}
    </>
  );
}

/**
 * The step's conditional branches as forms: each "if <value> <operator> <fixed value>, go to
 * <step>", tried in order; then what happens when none holds (end the run, or go to a step: a last
 * `{when: true}` branch). Each finding of the validation is shown at its branch.
 */
export function BranchEditor({
  workflow,
  index,
  issues,
  onChange,
}: {
  workflow: Workflow;
  index: number;
  issues: ShownIssue[];
  onChange: (w: Workflow) => void;
}) {
  const step = workflow.steps[index] as Step;
  const branches = branchesOf(step);
  const forms = branches.map(branchFormOf);
  const last = forms.at(-1);
  const otherwise = last?.kind === "otherwise" ? last : undefined;
  const conditional = otherwise ? forms.slice(0, -1) : forms;
  const { at, rest } = byBranch(issues);
  const variables = variablesOf(workflow, index);
  const save = (next: BranchForm[], fallback: string | undefined) => {
    const all: Branch[] = next.map(branchOf);
    onChange(setBranches(workflow, index, fallback ? [...all, { when: true, to: fallback }] : all));
  };
  const setOne = (k: number, f: BranchForm) =>
    save(
      conditional.map((c, j) => (j === k ? f : c)),
      otherwise?.to,
    );
  const add = () =>
    save(
      [
        ...conditional,
        {
          kind: "compare",
          variable: `steps.${step.id}.output`,
          operator: "==",
          value: "",
          to: workflow.steps.find((s) => s.id !== step.id)?.id ?? "",
        },
      ],
      otherwise?.to,
    );
  return (
    <fieldset className="wf-branches">
      <legend>After {step.id}: the first branch whose condition holds</legend>
      <IssueText issues={rest} />
      <ol>
        {conditional.map((f, k) => {
          const label = `Branch ${k + 1} of ${step.id}`;
          const { base, path } = f.kind === "compare" ? splitVariable(f.variable) : { base: "", path: "" };
          const found = at.get(k) ?? [];
          const ofTarget = found.filter((i) => /\.to$/.test(i.path));
          return (
            // biome-ignore lint/suspicious/noArrayIndexKey: the branches of one step, in order
            <li key={k} className="wf-branch">
              <fieldset aria-label={label}>
                <legend>If</legend>
                {f.kind === "compare" ? (
                  <div className="wf-branch-row">
                    <Pick
                      label="Value of"
                      value={base}
                      onChange={(b) => setOne(k, { ...f, variable: joinVariable(b, path) })}
                    >
                      {!variables.includes(base) && <option value={base}>{base}</option>}
                      {variables.map((v) => (
                        <option key={v} value={v}>
                          {v}
                        </option>
                      ))}
                    </Pick>
                    <Field
                      label="At path (optional)"
                      value={path}
                      onChange={(p) => setOne(k, { ...f, variable: joinVariable(base, p) })}
                    />
                    <Pick
                      label="Operator"
                      value={f.operator}
                      onChange={(o) => setOne(k, { ...f, operator: o as Operator })}
                    >
                      {OPERATORS.map(([o, name]) => (
                        <option key={o} value={o}>
                          {name}
                        </option>
                      ))}
                    </Pick>
                    <Field label="Fixed value" value={f.value} onChange={(v) => setOne(k, { ...f, value: v })} />
                  </div>
                ) : (
                  <JsonCondition
                    label="Condition (JSON Logic)"
                    when={f.kind === "json" ? f.when : true}
                    onChange={(when) => setOne(k, { kind: "json", when, to: f.to })}
                  />
                )}
                <IssueText issues={found.filter((i) => !ofTarget.includes(i))} />
                <div className="wf-branch-row">
                  <Pick label="Then" value={f.to} onChange={(to) => setOne(k, { ...f, to })} issues={ofTarget}>
                    {f.to === "" && <option value="">choose a step…</option>}
                    <Targets workflow={workflow} step={step} />
                  </Pick>
                  <button
                    type="button"
                    className="secondary danger"
                    aria-label={`Remove branch ${k + 1} of ${step.id}`}
                    onClick={() => {
                      const left = conditional.filter((_, j) => j !== k);
                      // The last branch gone: the step goes on to what "otherwise" named, or the run ends.
                      if (left.length > 0) save(left, otherwise?.to);
                      else onChange(setNext(workflow, index, otherwise?.to ?? ""));
                    }}
                  >
                    Remove branch
                  </button>
                </div>
              </fieldset>
            </li>
          );
        })}
      </ol>
      <div className="actions">
        <button type="button" className="secondary" onClick={add}>
          Add a branch
        </button>
      </div>
      <Pick
        label="When no branch holds"
        value={otherwise?.to ?? ""}
        onChange={(to) => save(conditional, to || undefined)}
        issues={otherwise ? (at.get(forms.length - 1) ?? []) : []}
      >
        <option value="">End the run</option>
        <Targets workflow={workflow} step={step} />
      </Pick>
    </fieldset>
  );
}
