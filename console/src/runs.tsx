import type { AgentRun, JudgeRun, PromptRun, SkillRun } from "@kiln/sdk";
import { type FormEvent, useCallback, useEffect, useState } from "react";
import { useLoaded } from "./action.js";
import { call, errorOf, type Session, type ShownError } from "./api.js";
import type { Navigate } from "./router.js";
import { DataTable, Empty, ErrorBox, Field, Link, Loading, Pending, SelectField, StepCells } from "./ui.js";

type Run = PromptRun | SkillRun | AgentRun | JudgeRun;
type ToolCall = PromptRun["toolCalls"][number];

const query = (f: Record<string, string>) =>
  Object.entries(f)
    .filter(([, v]) => v !== "")
    .map(([k, v]) => `${k}=${encodeURIComponent(v)}`)
    .join("&");

/** The organization's runs, filtered by kind, status, model and time (non-public GET /api/runs). */
export function Runs({ session, navigate }: { session: Session; navigate: Navigate }) {
  const [kind, setKind] = useState("");
  const [status, setStatus] = useState("");
  const [model, setModel] = useState("");
  const [after, setAfter] = useState("");
  const [runs, setRuns] = useState<Run[] | null>(null);
  const [error, setError] = useState<ShownError | null>(null);
  const load = useCallback(
    (filters: { kind: string; status: string; model: string; after: string }) => {
      const q = query({
        organizationId: session.organizationId ?? "",
        kind: filters.kind,
        status: filters.status,
        model: filters.model,
        createdAfter: filters.after ? new Date(filters.after).toISOString() : "",
        limit: "100",
      });
      call<{ data: Run[] }>("GET", `/api/runs?${q}`, undefined, session.accessToken)
        .then((r) => setRuns(r.data))
        .catch((e) => setError(errorOf(e)));
    },
    [session],
  );
  useEffect(() => load({ kind: "", status: "", model: "", after: "" }), [load]);
  function filter(e: FormEvent) {
    e.preventDefault();
    setError(null);
    setRuns(null);
    load({ kind, status, model, after });
  }
  return (
    <main>
      <h1>Runs</h1>
      <form onSubmit={filter} className="columns">
        <SelectField id="runs-kind" label="Kind" value={kind} onChange={setKind}>
          <Options values={["", "prompt", "skill", "agent", "judge"]} />
        </SelectField>
        <SelectField id="runs-status" label="Status" value={status} onChange={setStatus}>
          <Options values={["", "succeeded", "failed", "running"]} />
        </SelectField>
        <Field label="Model" value={model} onChange={setModel} issue={error?.fields.model} />
        <Field label="Created after" type="datetime-local" value={after} onChange={setAfter} />
        <div>
          <button type="submit">Filter runs</button>
        </div>
      </form>
      <ErrorBox error={error} />
      {runs === null ? (
        <Loading what="runs" />
      ) : runs.length === 0 ? (
        <Empty>No run matches.</Empty>
      ) : (
        <DataTable label="Runs" columns={["Run", "Kind", "Status", "Model", "Tokens", "Latency", "Created"]}>
          {runs.map((r) => (
            <tr key={r.id}>
              <td>
                <Link to={`/runs/${r.id}`} navigate={navigate}>
                  {r.id}
                </Link>
              </td>
              <td>{r.kind}</td>
              <td>{r.status}</td>
              <td>{r.model ?? "—"}</td>
              <td>
                {r.usage.inputTokens} / {r.usage.outputTokens}
              </td>
              <td>{r.latencyMs} ms</td>
              <td>{new Date(r.createdAt).toLocaleString()}</td>
            </tr>
          ))}
        </DataTable>
      )}
    </main>
  );
}

/** A filter's options, each shown as its value ("any" for the empty one). */
function Options({ values }: { values: string[] }) {
  return values.map((v) => (
    <option key={v} value={v}>
      {v || "any"}
    </option>
  ));
}

function ToolCalls({ calls }: { calls: ToolCall[] }) {
  if (calls.length === 0) return <span>none</span>;
  return (
    <ul>
      {calls.map((c, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: the calls of one step, in order
        <li key={i}>
          <code>{c.toolKey}</code> {JSON.stringify(c.input)} → {c.error ? c.error.message : JSON.stringify(c.output)} (
          {c.latencyMs} ms)
        </li>
      ))}
    </ul>
  );
}

/** One run with every step and tool call (non-public GET /api/runs/:id). */
export function RunDetail({ session, id }: { session: Session; id: string }) {
  const [error, setError] = useState<ShownError | null>(null);
  const read = useCallback(() => call<Run>("GET", `/api/runs/${id}`, undefined, session.accessToken), [session, id]);
  const run = useLoaded(read, setError).value;
  if (!run) return <Pending error={error} what="the run" />;
  return (
    <main>
      <h1>
        {run.kind} run {run.id}
      </h1>
      <dl className="summary">
        <dt>Status</dt>
        <dd>{run.status}</dd>
        <dt>Model</dt>
        <dd>{run.model ?? "—"}</dd>
        <dt>Tokens</dt>
        <dd>
          {run.usage.inputTokens} in / {run.usage.outputTokens} out
        </dd>
        <dt>Cost</dt>
        <dd>{run.estimatedCostUsd === null ? "unknown" : `$${run.estimatedCostUsd}`}</dd>
        <dt>Latency</dt>
        <dd>{run.latencyMs} ms</dd>
        <dt>Tool calls</dt>
        <dd>{run.toolCallCount}</dd>
      </dl>
      <h2>Input</h2>
      <pre className="output">{JSON.stringify(run.input, null, 2)}</pre>
      <h2>Output</h2>
      <pre className="output">{run.output?.text ?? run.error?.message ?? ""}</pre>
      {"steps" in run && run.steps.length > 0 ? (
        <>
          <h2>Steps</h2>
          <DataTable label="Steps" columns={["Step", "Status", "Output", "Tool calls"]}>
            {run.steps.map((s) => (
              <tr key={s.stepId}>
                <StepCells step={s} />
                <td>
                  <ToolCalls calls={s.toolCalls} />
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
