import type { Agent, Kiln, Workflow, WorkflowValidation } from "@kiln/sdk";
import { useCallback, useState } from "react";
import { useAction, useLoaded } from "./action.js";
import { AgentRuns } from "./agent-runs.js";
import type { Session } from "./api.js";
import { type FamilyList, listPage } from "./resource-list.js";
import { ActButton, Empty, Field, Pending } from "./ui.js";
import { DraftHeading, NewVersionButton } from "./versioned.js";
import { issuesByStep, WorkflowGraph } from "./workflow-graph.js";

/** Agents of the organization: list, create, open. */
export const agentList: FamilyList<Agent> = {
  client: (kiln) => kiln.agents,
  noun: "agent",
  nameLabel: "Agent name",
  emptyText: "No agent yet.",
};

export const AgentList = listPage(agentList);

/** One agent: the workflow (graph beside its JSON), validate, publish, roll back, run, rerun, compare. */
export function AgentDetail({ kiln, session, id }: { kiln: Kiln; session: Session; id: string }) {
  const [text, setText] = useState("");
  const [validation, setValidation] = useState<WorkflowValidation | null>(null);
  const { error, setError, act } = useAction();
  const read = useCallback(async () => {
    const a = await kiln.agents.get(id);
    setText(JSON.stringify(a.workflow, null, 2));
    return a;
  }, [kiln, id]);
  const { value: agent, setValue: setAgent, reload } = useLoaded(read, setError);
  let parsed: Workflow | null = null;
  let parseIssue: string | undefined;
  try {
    parsed = JSON.parse(text) as Workflow;
  } catch (e) {
    parseIssue = `is not JSON: ${(e as Error).message}`;
  }
  if (!agent) return <Pending error={error} what="the agent" />;
  const draft = agent.draftVersionId;
  const issues = issuesByStep(parsed, validation);
  const saveAndValidate = async () => {
    if (!draft || !parsed) return;
    await kiln.agents.saveWorkflow(draft, parsed);
    setValidation(await kiln.agents.validateWorkflow(draft));
  };
  return (
    <main>
      <DraftHeading resource={agent} noDraft="No draft." error={error} />
      <div className="columns">
        <section className="card" aria-labelledby="workflow">
          <h2 id="workflow">Workflow</h2>
          <Field label="Workflow (JSON)" multiline rows={14} value={text} onChange={setText} issue={parseIssue} />
          <div className="buttons">
            <ActButton act={act} run={saveAndValidate} disabled={!draft || parsed === null}>
              Save and validate
            </ActButton>{" "}
            <ActButton act={act} run={async () => setAgent(await kiln.agents.publish(id))} disabled={!draft}>
              Publish
            </ActButton>{" "}
            {!draft && <NewVersionButton act={act} create={() => kiln.agents.createVersion(id)} reload={reload} />}
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
                  <ActButton
                    act={act}
                    run={async () => setAgent(await kiln.agents.rollback(id, v.id))}
                    className="secondary"
                  >
                    Roll back to version {v.version}
                  </ActButton>
                )}
              </li>
            ))}
          </ul>
        </section>
      </div>
      <AgentRuns kiln={kiln} session={session} agent={agent} act={act} />
    </main>
  );
}
