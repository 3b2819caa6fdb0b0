import type { Agent, Kiln, Workflow, WorkflowValidation } from "@kiln/sdk";
import { useEffect, useRef, useState } from "react";
import type { Act } from "./action.js";
import { WorkflowBuilder } from "./agent-builder.js";
import type { ShownIssue } from "./agent-builder-fields.js";
import { useConfirmFocus } from "./confirm.js";
import { ActButton, Field } from "./ui.js";
import { issuesByStep, WorkflowGraph } from "./workflow-graph.js";
import { builderWorkflow } from "./workflow-model.js";
import { type Source, sourceOf } from "./workflow-sources.js";

const json = (v: unknown) => JSON.stringify(v, null, 2);
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
/** How long the editor waits after the last change before asking the validate route. */
const VALIDATE_AFTER_MS = 400;

/** What each step runs, by name (shortened to fit the graph's box). */
const namesOf = (w: Workflow, sources: Source[]) =>
  new Map(
    w.steps.flatMap((s) => {
      const name = sourceOf(sources, s.type, s.ref as Record<string, string | undefined>)?.name;
      return name ? [[s.id, name.length > 22 ? `${name.slice(0, 21)}…` : name] as const] : [];
    }),
  );

/** The findings of a validation as the builder shows them. */
const shownIssues = (v: WorkflowValidation | null): ShownIssue[] =>
  v
    ? [
        ...v.errors.map((i) => ({ ...i, severity: "error" as const })),
        ...v.warnings.map((i) => ({ ...i, severity: "warning" as const })),
      ]
    : [];

/** The workflow as edited, and the JSON text that shows it (kept as typed while it does not parse). */
interface Edited {
  value: Workflow;
  text: string;
  jsonIssue?: string;
}

/**
 * The agent version's workflow in two views kept in step: the builder, and its JSON (a text that
 * does not parse stays as typed, with its error, and the builder waits for it). Every change is
 * validated (the validate route, nothing saved); save keeps it as the draft; publish saves, then
 * publishes after a confirmation. Without a draft everything is read-only.
 */
export function WorkflowEditor({
  kiln,
  agent,
  sources,
  act,
  onAgent,
}: {
  kiln: Kiln;
  agent: Agent;
  sources: Source[];
  act: Act;
  onAgent: (a: Agent) => void;
}) {
  const draft = agent.draftVersionId;
  const start = builderWorkflow(agent.workflow);
  const [edited, setEdited] = useState<Edited>({ value: start, text: json(start) });
  const [saved, setSaved] = useState(json(start));
  const [tab, setTab] = useState<"builder" | "json">("builder");
  const [validation, setValidation] = useState<WorkflowValidation | null>(null);
  const [confirming, setConfirming] = useState(false);
  const cancelPublish = useRef<HTMLButtonElement>(null);
  useConfirmFocus(confirming, cancelPublish);
  const asked = useRef(0);
  const current = json(edited.value);
  useEffect(() => {
    const value = JSON.parse(current) as unknown;
    if (!isObject(value)) return;
    const n = ++asked.current;
    const timer = setTimeout(() => {
      kiln.agents.validateWorkflow(draft ?? agent.describedVersionId, value as Workflow).then(
        (v) => n === asked.current && setValidation(v),
        () => n === asked.current && setValidation(null),
      );
    }, VALIDATE_AFTER_MS);
    return () => clearTimeout(timer);
  }, [kiln, draft, agent.describedVersionId, current]);

  const dirty = saved !== current;
  // Leaving the page (closing, reloading) with unsaved changes asks first.
  useEffect(() => {
    if (!dirty || !draft) return;
    const ask = (e: BeforeUnloadEvent) => e.preventDefault();
    addEventListener("beforeunload", ask);
    return () => removeEventListener("beforeunload", ask);
  }, [dirty, draft]);

  const fromBuilder = (value: Workflow) => {
    setEdited({ value, text: json(value) });
    setConfirming(false);
  };
  const fromJson = (text: string) => {
    setConfirming(false);
    try {
      const value = JSON.parse(text) as unknown;
      if (!isObject(value)) setEdited((e) => ({ ...e, text, jsonIssue: "must be a JSON object {inputSchema, …}" }));
      else setEdited({ value: value as Workflow, text });
    } catch (e) {
      setEdited((old) => ({ ...old, text, jsonIssue: `is not JSON: ${(e as Error).message}` }));
    }
  };
  const save = async () => {
    if (!draft) return;
    const version = await kiln.agents.saveWorkflow(draft, edited.value);
    setSaved(json(version.workflow));
  };
  const publish = async () => {
    await save();
    onAgent(await kiln.agents.publish(agent.id));
  };
  const issues = shownIssues(validation);
  const graphed = builderWorkflow(edited.value);
  const draftNumber = agent.versions.find((v) => v.id === draft)?.version;
  const shown = agent.versions.find((v) => v.id === agent.describedVersionId)?.version;
  const tabs = [
    ["builder", "Builder"],
    ["json", "JSON"],
  ] as const;
  return (
    <section className="card" aria-labelledby="workflow">
      <h2 id="workflow">Workflow {draft ? `(draft version ${draftNumber})` : `(version ${shown}, read-only)`}</h2>
      <div role="tablist" aria-label="Workflow views" className="wf-tabs">
        {tabs.map(([key, name]) => (
          <button
            key={key}
            type="button"
            role="tab"
            id={`wf-tab-${key}`}
            aria-controls={`wf-panel-${key}`}
            aria-selected={tab === key}
            tabIndex={tab === key ? 0 : -1}
            onClick={() => setTab(key)}
            onKeyDown={(e) => {
              if (e.key !== "ArrowLeft" && e.key !== "ArrowRight") return;
              const other = key === "builder" ? "json" : "builder";
              setTab(other);
              document.getElementById(`wf-tab-${other}`)?.focus();
            }}
          >
            {name}
          </button>
        ))}
      </div>
      <div className="wf-layout">
        <div>
          <div role="tabpanel" id={`wf-panel-${tab}`} aria-labelledby={`wf-tab-${tab}`} className="wf-panel">
            <fieldset disabled={!draft} className="wf-frame">
              <legend className="visually-hidden">Workflow {tab === "builder" ? "builder" : "JSON"}</legend>
              {tab === "json" ? (
                <Field
                  label="Workflow (JSON)"
                  multiline
                  rows={18}
                  value={edited.text}
                  onChange={fromJson}
                  issue={edited.jsonIssue}
                />
              ) : edited.jsonIssue ? (
                <p role="alert" className="error">
                  The JSON view has an error ({edited.jsonIssue}): fix it there to go on in the builder.
                </p>
              ) : (
                <WorkflowBuilder workflow={graphed} sources={sources} issues={issues} onChange={fromBuilder} />
              )}
            </fieldset>
          </div>
          <ValidationSummary validation={validation} />
          {draft && (
            <div className="buttons wf-actions">
              <ActButton act={act} run={save} disabled={edited.jsonIssue !== undefined || !dirty}>
                {dirty ? "Save draft" : "Draft saved"}
              </ActButton>{" "}
              <button type="button" disabled={edited.jsonIssue !== undefined} onClick={() => setConfirming(true)}>
                Publish…
              </button>
            </div>
          )}
          {draft && confirming && (
            <div
              role="alertdialog"
              aria-labelledby="wf-confirm"
              className="confirm"
              onKeyDown={(e) => {
                if (e.key === "Escape") setConfirming(false);
              }}
            >
              <p id="wf-confirm">
                Publish version {draftNumber}? It goes live: runs of {agent.name} use it from now on
                {dirty ? " (the unsaved changes are saved first)" : ""}.
              </p>
              <ActButton act={act} run={publish}>
                Publish version {draftNumber}
              </ActButton>{" "}
              <button ref={cancelPublish} type="button" className="secondary" onClick={() => setConfirming(false)}>
                Cancel
              </button>
            </div>
          )}
        </div>
        <div className="wf-graph">
          <h3>Graph</h3>
          {graphed.steps.length === 0 ? (
            <p className="empty">No steps yet.</p>
          ) : (
            <WorkflowGraph
              workflow={graphed}
              issues={issuesByStep(graphed, validation)}
              names={namesOf(graphed, sources)}
            />
          )}
        </div>
      </div>
    </section>
  );
}

function ValidationSummary({ validation }: { validation: WorkflowValidation | null }) {
  if (!validation) return null;
  const { errors, warnings } = validation;
  const count = (n: number, what: string) => `${n} ${what}${n === 1 ? "" : "s"}`;
  return (
    <p role="status" className={errors.length > 0 ? "wf-summary wf-error" : "wf-summary"}>
      {errors.length === 0
        ? `The workflow is valid${warnings.length ? ` (${count(warnings.length, "warning")}, shown at their steps)` : ""}.`
        : `The workflow has errors: ${count(errors.length, "error")}${warnings.length ? ` and ${count(warnings.length, "warning")}` : ""}, shown at the steps and fields they concern.`}
    </p>
  );
}
