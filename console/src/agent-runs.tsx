import type { Agent, AgentRun, Kiln } from "@kiln/sdk";
import { useEffect, useState } from "react";
import type { Act } from "./action.js";
import { StoredAgentRuns } from "./agent-run-list.js";
import type { Session, ShownError } from "./api.js";
import { type Property, propertiesOf, VariableFields, variablesOf } from "./playground-inputs.js";
import type { Navigate } from "./router.js";
import { ActButton, DataTable, Link, SelectField, StatusBadge, StepCells } from "./ui.js";

/** The inputs the published version's workflow takes, as form fields. */
function usePublishedInputs(kiln: Kiln, agent: Agent): Property[] {
  const [properties, setProperties] = useState<Property[]>([]);
  const { id, publishedVersionId } = agent;
  useEffect(() => {
    if (!publishedVersionId) return setProperties([]);
    kiln.agents.get(id, { versionId: publishedVersionId }).then(
      (a) => setProperties(propertiesOf((a.workflow as { inputSchema?: unknown } | null)?.inputSchema)),
      () => setProperties([]),
    );
  }, [kiln, id, publishedVersionId]);
  return properties;
}

/** The values of a form from stored inputs: text as typed, anything else as JSON. */
const valuesOf = (inputs: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(inputs).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]));

/**
 * An agent's runs this session: run the published version with its inputs as a form, each step
 * with its own run, rerun from a step, load a run's inputs, compare the last two.
 */
export function AgentRuns({
  kiln,
  session,
  agent,
  act,
  error,
  navigate,
}: {
  kiln: Kiln;
  session: Session;
  agent: Agent;
  act: Act;
  error: ShownError | null;
  navigate: Navigate;
}) {
  const id = agent.id;
  const properties = usePublishedInputs(kiln, agent);
  const [values, setValues] = useState<Record<string, string>>({});
  const [runs, setRuns] = useState<AgentRun[]>([]);
  const [rerunStep, setRerunStep] = useState("");
  const [comparison, setComparison] = useState<string | null>(null);
  const lastRun = runs[0];
  const [refresh, setRefresh] = useState(0);
  const made = (run: AgentRun) => {
    setRuns((rs) => [run, ...rs]);
    setRefresh((n) => n + 1);
  };
  const runPublished = async () => {
    const inputs = variablesOf(properties, values);
    const run = await kiln.agents.run(id, { organizationId: session.organizationId, inputs });
    made(run);
    setRerunStep(run.steps[0]?.stepId ?? "");
  };
  const rerun = async (runId: string) => {
    made(await kiln.agentRuns.rerunFromStep(runId, { stepId: rerunStep }));
  };
  const loadInputs = async (runId: string) => {
    const loaded = await kiln.agentRuns.loadInputs(runId);
    setValues(valuesOf(loaded.inputs as Record<string, unknown>));
  };
  const compareLastTwo = async () => {
    const c = await kiln.agentRuns.compare([runs[1]?.id ?? "", runs[0]?.id ?? ""]);
    const same = (s: (typeof c.steps)[number]) => (s.outputsEqual ? "same output" : "different output");
    setComparison(c.steps.map((s) => `${s.stepId}: ${same(s)}`).join("; "));
  };
  return (
    <section className="card" aria-labelledby="agent-runs">
      <h2 id="agent-runs">Runs</h2>
      {agent.publishedVersionId ? (
        <>
          <h3>Inputs</h3>
          <VariableFields properties={properties} values={values} setValues={setValues} error={error} />
        </>
      ) : (
        <p className="hint">Publish a version to run the agent.</p>
      )}
      <ActButton act={act} run={runPublished} disabled={!agent.publishedVersionId}>
        Run the published version
      </ActButton>
      {lastRun && (
        <>
          <h3>
            Last run:{" "}
            <Link to={`/runs/${lastRun.id}`} navigate={navigate}>
              {lastRun.id}
            </Link>{" "}
            <StatusBadge status={lastRun.status} />
          </h3>
          <div className="agent-runs-table">
            <DataTable label="Steps of the last run" columns={["Step", "Status", "Output", "Its run"]}>
              {lastRun.steps.map((s) => (
                <tr key={s.stepId}>
                  <StepCells step={s} />
                  <td>
                    {s.runId ? (
                      <Link to={`/runs/${s.runId}`} navigate={navigate}>
                        {s.runId}
                      </Link>
                    ) : s.reused ? (
                      "reused from the run before"
                    ) : (
                      "a tool call (no run of its own)"
                    )}
                  </td>
                </tr>
              ))}
            </DataTable>
          </div>
          <SelectField id="rerun-step" label="Rerun from step" value={rerunStep} onChange={setRerunStep}>
            {lastRun.steps.map((s) => (
              <option key={s.stepId} value={s.stepId}>
                {s.stepId}
              </option>
            ))}
          </SelectField>
          <ActButton act={act} run={() => rerun(lastRun.id)}>
            Rerun
          </ActButton>{" "}
          <ActButton act={act} run={() => loadInputs(lastRun.id)} className="secondary">
            Load inputs
          </ActButton>{" "}
          {runs.length >= 2 && (
            <ActButton act={act} run={compareLastTwo} className="secondary">
              Compare the last two runs
            </ActButton>
          )}
          {comparison && <p role="status">{comparison}</p>}
          <p>
            {runs.length} run{runs.length === 1 ? "" : "s"} this session; the last {lastRun.status}
            {lastRun.parentRunId ? `, rerun of ${lastRun.parentRunId} from ${lastRun.rerunFromStepId}` : ""}.
          </p>
        </>
      )}
      <StoredAgentRuns session={session} agent={agent} refresh={refresh} navigate={navigate} />
    </section>
  );
}
