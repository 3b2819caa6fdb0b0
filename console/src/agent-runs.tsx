import type { Agent, AgentRun, Kiln } from "@kiln/sdk";
import { useState } from "react";
import type { Act } from "./action.js";
import type { Session } from "./api.js";
import { DataTable, Field, StepCells } from "./ui.js";

/** An agent's runs this session: run the published version, rerun from a step, load inputs, compare. */
export function AgentRuns({ kiln, session, agent, act }: { kiln: Kiln; session: Session; agent: Agent; act: Act }) {
  const id = agent.id;
  const [inputs, setInputs] = useState("{}");
  const [runs, setRuns] = useState<AgentRun[]>([]);
  const [rerunStep, setRerunStep] = useState("");
  const [comparison, setComparison] = useState<string | null>(null);
  const lastRun = runs[0];
  return (
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
          <DataTable label="Steps of the last run" columns={["Step", "Status", "Output", "Reused"]}>
            {lastRun.steps.map((s) => (
              <tr key={s.stepId}>
                <StepCells step={s} />
                <td>{s.reused ? "yes" : "no"}</td>
              </tr>
            ))}
          </DataTable>
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
  );
}
