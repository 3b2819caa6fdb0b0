import type { Agent, AgentRun, Kiln } from "@kiln/sdk";
import { useState } from "react";
import type { Act } from "./action.js";
import type { Session } from "./api.js";
import { ActButton, DataTable, Field, SelectField, StepCells } from "./ui.js";

/** An agent's runs this session: run the published version, rerun from a step, load inputs, compare. */
export function AgentRuns({ kiln, session, agent, act }: { kiln: Kiln; session: Session; agent: Agent; act: Act }) {
  const id = agent.id;
  const [inputs, setInputs] = useState("{}");
  const [runs, setRuns] = useState<AgentRun[]>([]);
  const [rerunStep, setRerunStep] = useState("");
  const [comparison, setComparison] = useState<string | null>(null);
  const lastRun = runs[0];
  const runPublished = async () => {
    const inputsObject = JSON.parse(inputs) as Record<string, unknown>;
    const run = await kiln.agents.run(id, { organizationId: session.organizationId, inputs: inputsObject });
    setRuns((rs) => [run, ...rs]);
    setRerunStep(run.steps[0]?.stepId ?? "");
  };
  const rerun = async (runId: string) => {
    const again = await kiln.agentRuns.rerunFromStep(runId, { stepId: rerunStep });
    setRuns((rs) => [again, ...rs]);
  };
  const loadInputs = async (runId: string) => {
    const loaded = await kiln.agentRuns.loadInputs(runId);
    setInputs(JSON.stringify(loaded.inputs, null, 2));
  };
  const compareLastTwo = async () => {
    const c = await kiln.agentRuns.compare([runs[1]?.id ?? "", runs[0]?.id ?? ""]);
    const same = (s: (typeof c.steps)[number]) => (s.outputsEqual ? "same output" : "different output");
    setComparison(c.steps.map((s) => `${s.stepId}: ${same(s)}`).join("; "));
  };
  return (
    <section className="card" aria-labelledby="agent-runs">
      <h2 id="agent-runs">Runs</h2>
      <Field label="Inputs (JSON)" multiline rows={3} value={inputs} onChange={setInputs} />
      <ActButton act={act} run={runPublished} disabled={!agent.publishedVersionId}>
        Run the published version
      </ActButton>
      {lastRun && (
        <>
          <DataTable label="Steps of the last run" columns={["Step", "Status", "Output", "Reused"]}>
            {lastRun.steps.map((s) => (
              <tr key={s.stepId}>
                <StepCells step={s} />
                <td>{s.reused ? "yes" : "no"}</td>
              </tr>
            ))}
          </DataTable>
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
    </section>
  );
}
