import type { AgentRun, Kiln, SkillRun } from "@kiln/sdk";
import { useCallback, useEffect, useState } from "react";
import { useLoaded } from "./action.js";
import { call, type Session, type ShownError } from "./api.js";
import { playgroundLink } from "./playground-link.js";
import { AddToQueue } from "./review-add.js";
import type { Navigate, PageProps } from "./router.js";
import { exactCost, formatCost, formatDate, formatLatency, formatTokens } from "./run-format.js";
import { RenderedMessages } from "./run-messages.js";
import { describeTarget, type Run, RunNames, type RunTarget } from "./run-names.js";
import { DataTable, Link, Pending, StatusBadge, StepCells } from "./ui.js";

type ToolCall = Run["toolCalls"][number];

function ToolCalls({ calls }: { calls: ToolCall[] }) {
  if (calls.length === 0) return <span>none</span>;
  return (
    <ul className="tool-calls">
      {calls.map((c, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: the calls of one step, in order
        <li key={i}>
          <code>{c.toolKey}</code> ({formatLatency(c.latencyMs)}){c.error ? " failed" : ""}
          <pre>
            {JSON.stringify(c.input, null, 2)}
            {"\n→ "}
            {c.error ? `${c.error.code}: ${c.error.message}` : JSON.stringify(c.output, null, 2)}
          </pre>
        </li>
      ))}
    </ul>
  );
}

/** How far before a prompt or skill run the agent run that stored it may have started. */
const AGENT_WINDOW_MS = 60 * 60 * 1000;

/**
 * The agent run a prompt or skill run was a step of. The run does not say (docs/api.md "Runs"):
 * the agent runs started in the hour before it are searched for a step naming it.
 */
async function parentAgentRun(session: Session, run: Run): Promise<AgentRun | null> {
  if (run.kind !== "prompt" && run.kind !== "skill") return null;
  const at = Date.parse(run.createdAt);
  const q = [
    `organizationId=${session.organizationId ?? ""}`,
    "kind=agent",
    `createdAfter=${encodeURIComponent(new Date(at - AGENT_WINDOW_MS).toISOString())}`,
    `createdBefore=${encodeURIComponent(new Date(at + 1).toISOString())}`,
    "limit=200",
  ].join("&");
  const page = await call<{ data: AgentRun[] }>("GET", `/api/runs?${q}`);
  return page.data.find((a) => a.steps.some((s) => s.runId === run.id)) ?? null;
}

/**
 * The report an evaluation's run belongs to: a skill's evaluation run (its skill run names the
 * skill) or a prompt evaluation (its prompt run names the prompt). A judge run names neither: the
 * skill or prompt run of the same evaluation stored in the hour before it does.
 */
async function evaluationReportPath(session: Session, run: Run): Promise<string | null> {
  const evaluationRunId = run.evaluationRunId;
  if (!evaluationRunId) return null;
  const reportOf = (r: { kind: string; skillId?: string; promptId?: string }) =>
    r.kind === "skill"
      ? `/skills/${r.skillId}/evaluations/${evaluationRunId}`
      : `/prompts/${r.promptId}/evaluations/${evaluationRunId}`;
  if (run.kind === "skill" || run.kind === "prompt") return reportOf(run as Run & { promptId?: string });
  const at = Date.parse(run.createdAt);
  for (const kind of ["skill", "prompt"]) {
    const q = [
      `organizationId=${session.organizationId ?? ""}`,
      `kind=${kind}`,
      `createdAfter=${encodeURIComponent(new Date(at - AGENT_WINDOW_MS).toISOString())}`,
      `createdBefore=${encodeURIComponent(new Date(at + 1).toISOString())}`,
      "limit=200",
    ].join("&");
    const page = await call<{ data: (SkillRun & { promptId?: string })[] }>("GET", `/api/runs?${q}`);
    const found = page.data.find((s) => s.evaluationRunId === evaluationRunId);
    if (found) return reportOf(found);
  }
  return null;
}

function EvaluationLink({ session, run, navigate }: { session: Session; run: Run; navigate: Navigate }) {
  const [report, setReport] = useState<string | null>(null);
  useEffect(() => {
    evaluationReportPath(session, run).then(setReport, () => setReport(null));
  }, [session, run]);
  if (!run.evaluationRunId) return null;
  const what = `evaluation run ${run.evaluationRunId}`;
  return (
    <>
      <dt>{run.kind === "judge" ? "Judged for" : run.kind === "prompt" ? "Item of" : "Case of"}</dt>
      <dd>
        {report ? (
          <Link to={report} navigate={navigate}>
            {what}
          </Link>
        ) : (
          what
        )}
      </dd>
    </>
  );
}

function Belongs({ kiln, session, run, navigate }: { kiln: Kiln; session: Session; run: Run; navigate: Navigate }) {
  const [target, setTarget] = useState<RunTarget | null>(null);
  const [agentRun, setAgentRun] = useState<AgentRun | null>(null);
  useEffect(() => {
    new RunNames(kiln).of(run).then(setTarget);
    parentAgentRun(session, run).then(setAgentRun, () => setAgentRun(null));
  }, [kiln, session, run]);
  return (
    <>
      <dt>What ran</dt>
      <dd>
        {target ? (
          <Link to={target.href} navigate={navigate}>
            {describeTarget(target)}
          </Link>
        ) : run.kind === "judge" ? (
          "an LLM judge of an evaluation"
        ) : run.kind === "model" ? (
          `the model ${run.model ?? ""}, called without a prompt`
        ) : (
          "…"
        )}
      </dd>
      <EvaluationLink session={session} run={run} navigate={navigate} />
      {agentRun && (
        <>
          <dt>Step of</dt>
          <dd>
            <Link to={`/runs/${agentRun.id}`} navigate={navigate}>
              agent run {agentRun.id}
            </Link>
          </dd>
        </>
      )}
      {run.kind === "agent" && run.parentRunId && (
        <>
          <dt>Rerun of</dt>
          <dd>
            <Link to={`/runs/${run.parentRunId}`} navigate={navigate}>
              {run.parentRunId}
            </Link>{" "}
            from step {run.rerunFromStepId}
          </dd>
        </>
      )}
    </>
  );
}

/** A prompt's or a skill's run opened in the playground: its version, with its variables (or input). */
function OpenInPlayground({ run, navigate }: { run: Run; navigate: Navigate }) {
  const input = (run.input ?? {}) as { variables?: Record<string, unknown>; input?: Record<string, unknown> };
  const to =
    run.kind === "prompt" && "promptId" in run && run.promptId && run.promptVersionId
      ? playgroundLink("prompt", run.promptId, run.promptVersionId, input.variables)
      : run.kind === "skill" && "skillId" in run && run.skillId && run.skillVersionId
        ? playgroundLink("skill", run.skillId, run.skillVersionId, input.input)
        : null;
  if (!to) return null;
  return (
    <p>
      <Link to={to} navigate={navigate}>
        Open in the playground
      </Link>{" "}
      <span className="hint">with this run's version and variables, to try a change without saving it</span>
    </p>
  );
}

/** One run: what ran, inputs, the messages sent, output, steps and tool calls (non-public GET /api/runs/:id). */
export function RunDetail({ kiln, session, id, navigate }: PageProps & { id: string }) {
  const [error, setError] = useState<ShownError | null>(null);
  const read = useCallback(() => call<Run>("GET", `/api/runs/${id}`), [id]);
  const run = useLoaded(read, setError).value;
  if (!run) return <Pending error={error} what="the run" />;
  return (
    <main>
      <h1>
        {run.kind} run <span className="run-id">{run.id}</span>
      </h1>
      <dl className="summary">
        <Belongs kiln={kiln} session={session} run={run} navigate={navigate} />
        {run.label && (
          <>
            <dt>Ran through label</dt>
            <dd>
              <code>{run.label}</code>
            </dd>
          </>
        )}
        <dt>Status</dt>
        <dd>
          <StatusBadge status={run.status} />
          {run.error && <code className="run-error-code">{run.error.code}</code>}
        </dd>
        <dt>Model</dt>
        <dd>{run.model ?? "several (see the steps)"}</dd>
        <dt>Tokens</dt>
        <dd>{formatTokens(run.usage)}</dd>
        <dt>Cost</dt>
        <dd title={exactCost(run.estimatedCostUsd)}>
          {formatCost(run.estimatedCostUsd)}
          {run.costNotes?.includes("cached_input_priced_as_input") &&
            " (cached input priced as input: no cached price)"}
        </dd>
        <dt>Latency</dt>
        <dd>{formatLatency(run.latencyMs)}</dd>
        <dt>Tool calls</dt>
        <dd>{run.toolCallCount}</dd>
        <dt>Created</dt>
        <dd>{formatDate(run.createdAt)}</dd>
      </dl>
      <AddToQueue kiln={kiln} session={session} runId={run.id} navigate={navigate} />
      <OpenInPlayground run={run} navigate={navigate} />
      <h2>Input</h2>
      <pre className="output">{JSON.stringify(run.input, null, 2)}</pre>
      <h2>Rendered messages</h2>
      <RenderedMessages kiln={kiln} run={run} />
      <h2>Output</h2>
      <pre className={run.status === "failed" ? "output failed" : "output"}>
        {run.output
          ? run.output.json !== undefined
            ? JSON.stringify(run.output.json, null, 2)
            : run.output.text
          : (run.error?.message ?? "")}
      </pre>
      {"steps" in run && run.steps.length > 0 ? (
        <>
          <h2>Steps</h2>
          <DataTable label="Steps" columns={["Step", "Status", "Output", "Model", "Tokens", "Tool calls", "Run"]}>
            {run.steps.map((s) => (
              <tr key={s.stepId}>
                <StepCells step={s} />
                <td>{s.model ?? "—"}</td>
                <td className="num">{formatTokens(s.usage)}</td>
                <td>
                  <ToolCalls calls={s.toolCalls} />
                </td>
                <td>
                  {"runId" in s && s.runId ? (
                    <Link to={`/runs/${s.runId}`} navigate={navigate}>
                      {s.runId}
                    </Link>
                  ) : "reused" in s && s.reused ? (
                    "reused"
                  ) : (
                    "—"
                  )}
                </td>
              </tr>
            ))}
          </DataTable>
        </>
      ) : (
        <>
          <h2>Tool calls</h2>
          <ToolCalls calls={run.toolCalls} />
        </>
      )}
    </main>
  );
}
