/**
 * One evaluation run's report: status (polled until it is done), totals and latency percentiles per
 * target, contract validity, and per case its input, output, verdict, reasons, attempts and runs.
 */
import type { EvaluationCase, EvaluationRun, Skill } from "@kiln/sdk";
import { useCallback, useEffect, useState } from "react";
import { useAction, useLoaded } from "./action.js";
import { allCases } from "./evaluation-cases.js";
import { caseNamer, isDone, percent } from "./evaluation-format.js";
import { EvaluationResultCard } from "./evaluation-result.js";
import type { PageProps } from "./router.js";
import { exactCost, formatCost, formatCount, formatDate, formatLatency, formatTokens } from "./run-format.js";
import { ActButton, DataTable, ErrorBox, Link, Pending } from "./ui.js";

type Summary = NonNullable<EvaluationRun["summary"]>;

/** The run (a skill's evaluation run, or a prompt evaluation), read again every `everyMs` until it is done. */
export function usePolledRun<R extends { status: string }>(
  read: () => Promise<R>,
  onError: Parameters<typeof useLoaded>[1],
  everyMs = 500,
) {
  const { value: run, setValue } = useLoaded<R>(read, onError);
  useEffect(() => {
    if (!run || isDone(run.status)) return;
    // A failed read keeps polling: the same run as a new object schedules the next read.
    const timer = setTimeout(() => read().then(setValue, () => setValue({ ...run })), everyMs);
    return () => clearTimeout(timer);
  }, [run, read, setValue, everyMs]);
  return { run, setRun: setValue };
}

/** Per target: outcomes, pass rate, latency percentiles, tokens, cost, judge calls. */
export function Totals({ summary }: { summary: Summary }) {
  const targets = Object.entries(summary.byTarget);
  return (
    <DataTable
      label="Totals per target"
      columns={[
        "Target",
        "Passed",
        "Failed",
        "Errors",
        "Flaky",
        "Pass rate",
        "Latency p50 / p95 / p99",
        "Tokens",
        "Cost",
        "Judge",
      ]}
    >
      {targets.map(([label, t]) => (
        <tr key={label}>
          <th scope="row">{label}</th>
          <td className="num">{formatCount(t.passed)}</td>
          <td className="num">{formatCount(t.failed)}</td>
          <td className="num">{formatCount(t.errored)}</td>
          <td className="num">{formatCount(t.flaky)}</td>
          <td className="num">{percent(t.passRate)}</td>
          <td className="num">
            {formatLatency(t.latencyMs.p50)} / {formatLatency(t.latencyMs.p95)} / {formatLatency(t.latencyMs.p99)}
          </td>
          <td className="nowrap">{formatTokens(t.usage)}</td>
          <td className="num" title={exactCost(t.totalCostUsd)}>
            {formatCost(t.totalCostUsd)}
            {t.unpricedRuns > 0 && ` (${formatCost(t.pricedCostUsd)} priced, ${t.unpricedRuns} unpriced runs)`}
          </td>
          <td className="nowrap" title={exactCost(t.judge.estimatedCostUsd)}>
            {t.judge.runs === 0 ? "—" : `${formatCount(t.judge.runs)} runs · ${formatCost(t.judge.estimatedCostUsd)}`}
          </td>
        </tr>
      ))}
    </DataTable>
  );
}

type Only = "all" | "failing";
type Reported = { byTarget: Record<string, { verdict: string } | undefined> };

/** A result is failing or flaky on a target it has a result for (a target still running is not counted). */
export const failingOn = (targets: string[]) => (r: Reported) =>
  targets.some((t) => r.byTarget[t] && r.byTarget[t]?.verdict !== "passed");

/** The run's status badge and its live line: the summary once done, else how many results are in. */
export function RunStatus({
  run,
  noun,
}: {
  run: { status: string; results: unknown[]; summary?: { text: string } | null };
  noun: string;
}) {
  const done = isDone(run.status);
  return (
    <p className="eval-status">
      <span className={`badge status-${run.status === "completed" ? "succeeded" : done ? "failed" : "running"}`}>
        {run.status}
      </span>{" "}
      <span role="status" aria-live="polite">
        Evaluation {run.status}
        {done ? `: ${run.summary?.text ?? ""}` : ` (${run.results.length} of the ${noun}s reported so far)…`}
      </span>
    </p>
  );
}

/** Every result, or the failing and flaky ones only. */
export function FailingFilter({
  only,
  onChange,
  total,
  failing,
  noun,
}: {
  only: Only;
  onChange: (only: Only) => void;
  total: number;
  failing: number;
  noun: string;
}) {
  return (
    <fieldset className="segmented">
      <legend>Show</legend>
      <label className="check inline">
        <input type="radio" name="only" checked={only === "all"} onChange={() => onChange("all")} /> every {noun} (
        {total})
      </label>
      <label className="check inline">
        <input type="radio" name="only" checked={only === "failing"} onChange={() => onChange("failing")} /> failing or
        flaky ({failing})
      </label>
    </fieldset>
  );
}

export function EvaluationReport({ kiln, navigate, skillId, runId }: PageProps & { skillId: string; runId: string }) {
  const { error, setError, act } = useAction();
  const readRun = useCallback(() => kiln.evaluations.get(skillId, runId), [kiln, skillId, runId]);
  const { run, setRun } = usePolledRun(readRun, setError);
  const readSkill = useCallback(() => kiln.skills.get(skillId), [kiln, skillId]);
  const skill = useLoaded<Skill>(readSkill, setError).value;
  const readCases = useCallback(() => allCases(kiln, skillId), [kiln, skillId]);
  const cases = useLoaded<EvaluationCase[]>(readCases, setError).value;
  const [only, setOnly] = useState<Only>("all");
  if (!run) return <Pending error={error} what="the evaluation run" />;
  const nameOf = caseNamer(cases);
  const byId = new Map((cases ?? []).map((c) => [c.id, c]));
  const targets = run.targets.map((t) => t.label);
  const failing = failingOn(targets);
  const shown = only === "all" ? run.results : run.results.filter(failing);
  const done = isDone(run.status);
  const skillPath = `/skills/${skillId}`;
  return (
    <main className="eval-report">
      <p className="crumbs">
        <Link to={skillPath} navigate={navigate}>
          {skill?.name ?? "Skill"}
        </Link>{" "}
        › Evaluations
      </p>
      <h1>Evaluation report</h1>
      <ErrorBox error={error} />
      <RunStatus run={run} noun="case" />
      <dl className="summary">
        <dt>Started</dt>
        <dd>{formatDate(run.createdAt)}</dd>
        <dt>Targets</dt>
        <dd>{targets.join(", ")}</dd>
        <dt>Attempts per case</dt>
        <dd>{run.repeats}</dd>
        {run.completedAt && (
          <>
            <dt>Finished</dt>
            <dd>{formatDate(run.completedAt)}</dd>
          </>
        )}
      </dl>
      {!done && (
        <ActButton
          act={act}
          className="secondary"
          run={async () => setRun(await kiln.evaluations.cancel(skillId, runId))}
        >
          Cancel the run
        </ActButton>
      )}
      {run.summary && (
        <section aria-labelledby="totals-heading">
          <h2 id="totals-heading">Totals</h2>
          <Totals summary={run.summary} />
          {Object.keys(run.summary.byTarget).length > 1 && (
            <p>
              Changes: {run.summary.changes.fixed} fixed, {run.summary.changes.regressed} regressed,{" "}
              {run.summary.changes.outputChanged} output changed, {run.summary.changes.unchanged} unchanged.
            </p>
          )}
        </section>
      )}
      {run.contractValidity && (
        <p className={run.contractValidity.valid ? "contract ok" : "contract broken"}>
          Contract {run.contractValidity.valid ? "holds" : "broken"}
          {run.contractValidity.breakingChanges.length > 0 &&
            `: ${run.contractValidity.breakingChanges.map((b) => b.message).join("; ")}`}
          {run.contractValidity.violations.length > 0 &&
            ` (${run.contractValidity.violations.length} output${run.contractValidity.violations.length === 1 ? "" : "s"} off the output schema)`}
        </p>
      )}
      <section aria-labelledby="cases-heading">
        <h2 id="cases-heading">Cases</h2>
        <FailingFilter
          only={only}
          onChange={setOnly}
          total={run.results.length}
          failing={run.results.filter(failing).length}
          noun="case"
        />
        {shown.map((r) => (
          <EvaluationResultCard
            key={r.caseId}
            result={r}
            title={nameOf(r.caseId)}
            evaluationCase={byId.get(r.caseId) ?? null}
            targets={targets}
            navigate={navigate}
          />
        ))}
      </section>
    </main>
  );
}
