import type { Agent, AgentRun } from "@kiln/sdk";
import { useEffect, useState } from "react";
import type { Session } from "./api.js";
import type { Navigate } from "./router.js";
import { formatCost, formatDate, formatLatency } from "./run-format.js";
import { runList } from "./runs.js";
import { DataTable, Empty, Link, StatusBadge } from "./ui.js";

/** How many of the agent's stored runs the page shows, and how many agent runs it reads at most to find them. */
const SHOWN = 10;
const SCANNED = 500;

/**
 * The agent's latest stored runs: the organization's agent runs read newest first through the
 * SDK's pagination (the runs list filters by kind, not by agent) until ten of this agent's are
 * found. `refresh` changes when a run was made here.
 */
function useStoredRuns(session: Session, agentId: string, refresh: number): AgentRun[] | null {
  const [runs, setRuns] = useState<AgentRun[] | null>(null);
  // biome-ignore lint/correctness/useExhaustiveDependencies: refresh asks for a new read on purpose
  useEffect(() => {
    let stop = false;
    (async () => {
      const found: AgentRun[] = [];
      let scanned = 0;
      const all = runList(session, { kind: "agent", status: "", model: "", after: "", before: "" });
      for await (const run of all) {
        if (stop || ++scanned > SCANNED) break;
        if (run.kind === "agent" && run.agentId === agentId) found.push(run);
        if (found.length === SHOWN) break;
      }
      if (!stop) setRuns(found);
    })().catch(() => !stop && setRuns([]));
    return () => {
      stop = true;
    };
  }, [session, agentId, refresh]);
  return runs;
}

/** The agent's latest stored runs, each with its version, status, steps, cost and latency, linked to its page. */
export function StoredAgentRuns({
  session,
  agent,
  refresh,
  navigate,
}: {
  session: Session;
  agent: Agent;
  refresh: number;
  navigate: Navigate;
}) {
  const runs = useStoredRuns(session, agent.id, refresh);
  const versionOf = (id: string) => agent.versions.find((v) => v.id === id)?.version;
  return (
    <>
      <h3>Latest runs</h3>
      {runs === null ? (
        <p className="hint">Reading the runs…</p>
      ) : runs.length === 0 ? (
        <Empty>No run yet: run the published version above.</Empty>
      ) : (
        <div className="agent-runs-table">
          <DataTable
            label="Latest runs of the agent"
            columns={["Run", "Version", "Status", "Steps", "Cost", "Latency", "Created"]}
          >
            {runs.map((r) => (
              <tr key={r.id} className={r.status === "failed" ? "run-failed" : undefined}>
                <td>
                  <Link to={`/runs/${r.id}`} navigate={navigate}>
                    {r.id}
                  </Link>
                </td>
                <td className="num">{versionOf(r.agentVersionId) ?? "?"}</td>
                <td>
                  <StatusBadge status={r.status} />
                </td>
                <td>{r.steps.map((s) => s.stepId).join(" → ")}</td>
                <td className="num">{formatCost(r.estimatedCostUsd)}</td>
                <td className="num">{formatLatency(r.latencyMs)}</td>
                <td className="nowrap">{formatDate(r.createdAt)}</td>
              </tr>
            ))}
          </DataTable>
        </div>
      )}
    </>
  );
}
