import type { Agent, AgentRun, Kiln, Workflow, WorkflowValidation } from "@kiln/sdk";
import { type FormEvent, useCallback, useEffect, useState } from "react";
import { errorOf, type Session, type ShownError } from "./api.js";
import type { Navigate } from "./router.js";
import { Empty, ErrorBox, Field, Link, Loading, TableWrap } from "./ui.js";

/** Agents of the organization: list, create, open. */
export function AgentList({ kiln, session, navigate }: { kiln: Kiln; session: Session; navigate: Navigate }) {
  const [agents, setAgents] = useState<Agent[] | null>(null);
  const [name, setName] = useState("");
  const [error, setError] = useState<ShownError | null>(null);
  useEffect(() => {
    kiln.agents
      .list({ organizationId: session.organizationId, limit: 200 })
      .then((page) => setAgents(page.data))
      .catch((e) => setError(errorOf(e)));
  }, [kiln, session.organizationId]);
  async function create(e: FormEvent) {
    e.preventDefault();
    setError(null);
    try {
      const agent = await kiln.agents.create({ organizationId: session.organizationId, name });
      navigate(`/agents/${agent.id}`);
    } catch (err) {
      setError(errorOf(err));
    }
  }
  return (
    <main>
      <h1>Agents</h1>
      <div className="columns">
        <form className="card" onSubmit={create} noValidate>
          <h2>New agent</h2>
          <Field label="Agent name" value={name} onChange={setName} issue={error?.fields.name} required />
          <ErrorBox error={error && !error.fields.name ? error : null} />
          <button type="submit">Create agent</button>
        </form>
        <section aria-labelledby="all-agents">
          <h2 id="all-agents">All agents</h2>
          {agents === null ? (
            <Loading what="agents" />
          ) : agents.length === 0 ? (
            <Empty>No agent yet.</Empty>
          ) : (
            <ul>
              {agents.map((a) => (
                <li key={a.id}>
                  <Link to={`/agents/${a.id}`} navigate={navigate}>
                    {a.name}
                  </Link>{" "}
                  {a.publishedVersionId ? "published" : "draft"}
                </li>
              ))}
            </ul>
          )}
        </section>
      </div>
    </main>
  );
}

type Step = Workflow["steps"][number];

/** The issues of a validation pinned to the step they are about (`steps[i]…`). */
function issuesByStep(workflow: Workflow | null, validation: WorkflowValidation | null): Map<string, string[]> {
  const byStep = new Map<string, string[]>();
  if (!workflow || !validation) return byStep;
  for (const issue of [...validation.errors, ...validation.warnings]) {
    const index = /^steps\[(\d+)\]/.exec(issue.path)?.[1];
    const step = index === undefined ? undefined : workflow.steps[Number(index)];
    const key = step?.id ?? "(workflow)";
    byStep.set(key, [...(byStep.get(key) ?? []), `${issue.code}: ${issue.message}`]);
  }
  return byStep;
}

/** The workflow as a graph: one box per step in order, arrows for `next` and branches. */
export function WorkflowGraph({ workflow, issues }: { workflow: Workflow; issues: Map<string, string[]> }) {
  const steps = workflow.steps ?? [];
  const width = 220;
  const height = 56;
  const gap = 40;
  const index = new Map(steps.map((s, i) => [s.id, i]));
  const edges = steps.flatMap((s: Step, i) => {
    const next = s.next;
    if (typeof next === "string") return [{ from: i, to: index.get(next), label: "" }];
    if (Array.isArray(next)) return next.map((b, k) => ({ from: i, to: index.get(b.to), label: `branch ${k + 1}` }));
    return [];
  });
  const total = steps.length * (height + gap);
  return (
    <figure className="graph">
      <svg
        viewBox={`0 0 ${width + 160} ${Math.max(total, height)}`}
        width="100%"
        role="img"
        aria-label={`Workflow of ${steps.length} steps starting at ${workflow.entry}`}
      >
        <defs>
          <marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" markerHeight="6" orient="auto">
            <path d="M0,0 L10,5 L0,10 z" fill="#232136" />
          </marker>
        </defs>
        {edges.map((e, k) => {
          if (e.to === undefined) return null;
          const y1 = e.from * (height + gap) + height;
          const y2 = e.to * (height + gap);
          const forward = e.to > e.from;
          const x = width / 2 + (forward ? 0 : width / 2 + 20);
          const path = forward
            ? `M${width / 2},${y1} L${width / 2},${y2}`
            : `M${width},${y1 - height / 2} C${x + 60},${y1} ${x + 60},${y2} ${width},${y2 + height / 2}`;
          return (
            // biome-ignore lint/suspicious/noArrayIndexKey: edges of one workflow, in order
            <g key={k}>
              <path d={path} stroke="#232136" fill="none" markerEnd="url(#arrow)" />
              {e.label && (
                <text x={width / 2 + 8} y={(y1 + y2) / 2} fontSize="11">
                  {e.label}
                </text>
              )}
            </g>
          );
        })}
        {steps.map((s, i) => {
          const bad = issues.has(s.id);
          return (
            <g key={s.id} transform={`translate(0, ${i * (height + gap)})`}>
              <rect
                width={width}
                height={height}
                rx="6"
                fill={bad ? "#fdecea" : "#fff"}
                stroke={bad ? "#b3261e" : "#232136"}
              />
              <text x="10" y="22" fontSize="14" fontWeight="600">
                {s.id}
                {s.id === workflow.entry ? " (entry)" : ""}
              </text>
              <text x="10" y="42" fontSize="12">
                {s.type}
                {bad ? " · has issues" : ""}
              </text>
            </g>
          );
        })}
      </svg>
      <figcaption>Steps in order; arrows follow next and branches.</figcaption>
    </figure>
  );
}

/** One agent: the workflow (graph beside its JSON), validate, publish, roll back, run, rerun, compare. */
export function AgentDetail({ kiln, session, id }: { kiln: Kiln; session: Session; id: string }) {
  const [agent, setAgent] = useState<Agent | null>(null);
  const [text, setText] = useState("");
  const [validation, setValidation] = useState<WorkflowValidation | null>(null);
  const [inputs, setInputs] = useState("{}");
  const [runs, setRuns] = useState<AgentRun[]>([]);
  const [rerunStep, setRerunStep] = useState("");
  const [comparison, setComparison] = useState<string | null>(null);
  const [error, setError] = useState<ShownError | null>(null);
  const load = useCallback(() => {
    kiln.agents
      .get(id)
      .then((a) => {
        setAgent(a);
        setText(JSON.stringify(a.workflow, null, 2));
      })
      .catch((e) => setError(errorOf(e)));
  }, [kiln, id]);
  useEffect(load, [load]);
  const act = async (what: () => Promise<void>) => {
    setError(null);
    try {
      await what();
    } catch (err) {
      setError(errorOf(err));
    }
  };
  let parsed: Workflow | null = null;
  let parseIssue: string | undefined;
  try {
    parsed = JSON.parse(text) as Workflow;
  } catch (e) {
    parseIssue = `is not JSON: ${(e as Error).message}`;
  }
  if (!agent) return <main>{error ? <ErrorBox error={error} /> : <Loading what="the agent" />}</main>;
  const draft = agent.draftVersionId;
  const issues = issuesByStep(parsed, validation);
  const lastRun = runs[0];
  return (
    <main>
      <h1>{agent.name}</h1>
      <p>
        {draft ? "Editing the draft." : "No draft."}{" "}
        {agent.publishedVersionId ? "A version is published." : "Nothing published yet."}
      </p>
      <ErrorBox error={error} />
      <div className="columns">
        <section className="card" aria-labelledby="workflow">
          <h2 id="workflow">Workflow</h2>
          <Field label="Workflow (JSON)" multiline rows={14} value={text} onChange={setText} issue={parseIssue} />
          <div className="buttons">
            <button
              type="button"
              disabled={!draft || parsed === null}
              onClick={() =>
                act(async () => {
                  if (!draft || !parsed) return;
                  await kiln.agents.saveWorkflow(draft, parsed);
                  setValidation(await kiln.agents.validateWorkflow(draft));
                })
              }
            >
              Save and validate
            </button>{" "}
            <button
              type="button"
              disabled={!draft}
              onClick={() => act(async () => setAgent(await kiln.agents.publish(id)))}
            >
              Publish
            </button>{" "}
            {!draft && (
              <button
                type="button"
                className="secondary"
                onClick={() =>
                  act(async () => {
                    await kiln.agents.createVersion(id);
                    load();
                  })
                }
              >
                New version
              </button>
            )}
          </div>
          {validation && (
            <div role="status">
              <p>{validation.valid ? "The workflow is valid." : "The workflow has errors."}</p>
              {[...issues.entries()].map(([step, list]) => (
                <div key={step}>
                  <strong>{step}</strong>
                  <ul>
                    {list.map((m) => (
                      <li key={m}>{m}</li>
                    ))}
                  </ul>
                </div>
              ))}
            </div>
          )}
        </section>
        <section className="card" aria-labelledby="graph">
          <h2 id="graph">Graph</h2>
          {parsed && Array.isArray(parsed.steps) ? (
            <WorkflowGraph workflow={parsed} issues={issues} />
          ) : (
            <Empty>No steps yet.</Empty>
          )}
          <h3>Versions</h3>
          <ul>
            {agent.versions.map((v) => (
              <li key={v.id}>
                Version {v.version} {v.id === agent.publishedVersionId ? "(published, live)" : `(${v.status})`}{" "}
                {v.status === "published" && v.id !== agent.publishedVersionId && (
                  <button
                    type="button"
                    className="secondary"
                    onClick={() => act(async () => setAgent(await kiln.agents.rollback(id, v.id)))}
                  >
                    Roll back to version {v.version}
                  </button>
                )}
              </li>
            ))}
          </ul>
        </section>
      </div>
      <section className="card" aria-labelledby="agent-runs">
        <h2 id="agent-runs">Runs</h2>
        <Field label="Inputs (JSON)" multiline rows={3} value={inputs} onChange={setInputs} />
        <button
          type="button"
          disabled={!agent.publishedVersionId}
          onClick={() =>
            act(async () => {
              const run = await kiln.agents.run(id, {
                organizationId: session.organizationId,
                inputs: JSON.parse(inputs) as Record<string, unknown>,
              });
              setRuns((rs) => [run, ...rs]);
              setRerunStep(run.steps[0]?.stepId ?? "");
            })
          }
        >
          Run the published version
        </button>
        {lastRun && (
          <>
            <TableWrap label="Steps of the last run">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Step</th>
                    <th scope="col">Status</th>
                    <th scope="col">Output</th>
                    <th scope="col">Reused</th>
                  </tr>
                </thead>
                <tbody>
                  {lastRun.steps.map((s) => (
                    <tr key={s.stepId}>
                      <td>{s.stepId}</td>
                      <td>{s.status}</td>
                      <td>
                        <pre className="output">{s.output?.text ?? s.error?.message ?? ""}</pre>
                      </td>
                      <td>{s.reused ? "yes" : "no"}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableWrap>
            <div className="field">
              <label htmlFor="rerun-step">Rerun from step</label>
              <select id="rerun-step" value={rerunStep} onChange={(e) => setRerunStep(e.target.value)}>
                {lastRun.steps.map((s) => (
                  <option key={s.stepId} value={s.stepId}>
                    {s.stepId}
                  </option>
                ))}
              </select>
            </div>
            <button
              type="button"
              onClick={() =>
                act(async () => {
                  const rerun = await kiln.agentRuns.rerunFromStep(lastRun.id, { stepId: rerunStep });
                  setRuns((rs) => [rerun, ...rs]);
                })
              }
            >
              Rerun
            </button>{" "}
            <button
              type="button"
              className="secondary"
              onClick={() =>
                act(async () => {
                  const loaded = await kiln.agentRuns.loadInputs(lastRun.id);
                  setInputs(JSON.stringify(loaded.inputs, null, 2));
                })
              }
            >
              Load inputs
            </button>{" "}
            {runs.length >= 2 && (
              <button
                type="button"
                className="secondary"
                onClick={() =>
                  act(async () => {
                    const c = await kiln.agentRuns.compare([runs[1]?.id ?? "", runs[0]?.id ?? ""]);
                    setComparison(
                      c.steps
                        .map((s) => `${s.stepId}: ${s.outputsEqual ? "same output" : "different output"}`)
                        .join("; "),
                    );
                  })
                }
              >
                Compare the last two runs
              </button>
            )}
            {comparison && <p role="status">{comparison}</p>}
            <p>
              {runs.length} run{runs.length === 1 ? "" : "s"} this session; the last {lastRun.status}
              {lastRun.parentRunId ? `, rerun of ${lastRun.parentRunId} from ${lastRun.rerunFromStepId}` : ""}.
            </p>
          </>
        )}
      </section>
    </main>
  );
}
