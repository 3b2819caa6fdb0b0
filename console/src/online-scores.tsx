import type { Kiln, OnlineRule, OnlineScore, OnlineScoreSummary } from "@kiln/sdk";
import { useCallback, useEffect, useMemo, useState } from "react";
import { errorOf, type Session, type ShownError } from "./api.js";
import { percent } from "./evaluation-format.js";
import { ScoreChart, seriesName, type VersionNames } from "./online-chart.js";
import { ListEnd, usePagedList } from "./paged-list.js";
import type { Navigate } from "./router.js";
import { exactCost, formatCost, formatDate } from "./run-format.js";
import { RunNames } from "./run-names.js";
import { DataTable, Empty, ErrorBox, Link, Loading, SelectField } from "./ui.js";

const PAGE_SIZE = 50;
const percentOrDash = (v: number | null) => (v === null ? "–" : percent(v));

const FAMILIES = { prompt: "prompts", skill: "skills", agent: "agents" } as const;

/** The versions of the rules' prompts, skills and agents by name ("Greeter v3"), read once per page. */
function useVersionNames(kiln: Kiln, rules: OnlineRule[]): VersionNames {
  const names = useMemo(() => new RunNames(kiln), [kiln]);
  const [found, setFound] = useState<VersionNames>(new Map());
  const targets = [
    ...new Set(rules.flatMap((r) => (r.target.kind === "traces" ? [] : [`${FAMILIES[r.target.kind]}/${r.target.id}`]))),
  ]
    .sort()
    .join(",");
  useEffect(() => {
    let live = true;
    const reads = targets
      .split(",")
      .filter((t) => t !== "")
      .map((t) => {
        const [family, id] = t.split("/") as ["prompts" | "skills" | "agents", string];
        return names.versionNames(family, id);
      });
    Promise.all(reads).then((lists) => {
      if (live) setFound(new Map(lists.flat()));
    });
    return () => {
      live = false;
    };
  }, [names, targets]);
  return found;
}

/** The scores of the organization's rules (or one rule): the chart over time, its figures, and the scores. */
export function OnlineScores({
  kiln,
  session,
  rules,
  navigate,
}: {
  kiln: Kiln;
  session: Session;
  rules: OnlineRule[];
  navigate: Navigate;
}) {
  const [ruleId, setRuleId] = useState("");
  const [bucket, setBucket] = useState<"hour" | "day">("hour");
  const [summary, setSummary] = useState<OnlineScoreSummary | null>(null);
  const [summaryError, setSummaryError] = useState<ShownError | null>(null);
  const list = usePagedList<OnlineScore>();
  const { items: scores, error, start } = list;
  const load = useCallback(() => {
    const filters = { organizationId: session.organizationId, ...(ruleId && { ruleId }) };
    start(kiln.scores.list({ ...filters, limit: PAGE_SIZE }).pages());
    kiln.scores.summary({ ...filters, bucket }).then(setSummary, (e: unknown) => setSummaryError(errorOf(e)));
  }, [kiln, session, ruleId, bucket, start]);
  useEffect(load, [load]);
  const ruleName = new Map(rules.map((r) => [r.id, r.name]));
  const versionNames = useVersionNames(kiln, rules);
  return (
    <section aria-labelledby="scores-heading">
      <h2 id="scores-heading">Scores</h2>
      <form className="filters" aria-label="Filter scores" onSubmit={(e) => e.preventDefault()}>
        <SelectField id="scores-rule" label="Rule" value={ruleId} onChange={setRuleId}>
          <option value="">every rule</option>
          {rules.map((r) => (
            <option key={r.id} value={r.id}>
              {r.name}
            </option>
          ))}
        </SelectField>
        <SelectField id="scores-bucket" label="Per" value={bucket} onChange={(b) => setBucket(b as "hour" | "day")}>
          <option value="hour">hour</option>
          <option value="day">day</option>
        </SelectField>
        <div className="filter-actions">
          <button type="button" className="secondary" onClick={load}>
            Refresh scores
          </button>
        </div>
      </form>
      <ErrorBox error={summaryError ?? error} />
      {summary && summary.buckets.length > 0 && (
        <>
          <h3>Over time</h3>
          <ScoreChart summary={summary} names={versionNames} />
          <DataTable
            label="Scores over time"
            columns={[
              "From",
              "Version and label",
              "Scored",
              "Pass rate",
              "Mean judge score",
              "Judge cost",
              "Runs' cost",
            ]}
          >
            {summary.buckets.map((b) => (
              <tr key={`${b.start}-${b.versionId}-${b.label}`}>
                <td className="nowrap">{formatDate(b.start)}</td>
                <td>{seriesName(b, versionNames)}</td>
                <td className="num">{b.count}</td>
                <td className="num">{percentOrDash(b.passRate)}</td>
                <td className="num">{percentOrDash(b.meanScore)}</td>
                <td className="num">{formatCost(b.judgeCostUsd)}</td>
                <td className="num">{formatCost(b.runCostUsd)}</td>
              </tr>
            ))}
          </DataTable>
        </>
      )}
      {scores === null ? (
        error ? null : (
          <Loading what="scores" />
        )
      ) : scores.length === 0 ? (
        <Empty>No score yet: runs a rule samples are scored within seconds of completing.</Empty>
      ) : (
        <>
          <h3>Scored runs and generations</h3>
          <DataTable label="Scores" columns={["Scored", "Rule", "Verdict", "Judge score", "Why", "Judge cost", "When"]}>
            {scores.map((s) => (
              <tr key={s.id} className={s.passed ? undefined : "run-failed"}>
                <td>
                  {s.target.runId ? (
                    <Link to={`/runs/${s.target.runId}`} navigate={navigate}>
                      {s.target.runId}
                    </Link>
                  ) : (
                    `span ${s.target.spanId} of trace ${s.target.traceId}`
                  )}
                </td>
                <td>{ruleName.get(s.ruleId) ?? s.ruleId}</td>
                <td>
                  <span className={`badge status-${s.passed ? "succeeded" : "failed"}`}>
                    {s.passed ? "pass" : "fail"}
                  </span>
                </td>
                <td className="num">{s.score === null ? "–" : s.score.toFixed(2)}</td>
                <td>{s.assertions.map((a) => a.message).join("; ")}</td>
                <td className="num" title={s.judgeRuns.length ? exactCost(s.judgeCostUsd) : undefined}>
                  {s.judgeRuns.length ? formatCost(s.judgeCostUsd) : "–"}
                </td>
                <td className="nowrap">{formatDate(s.occurredAt)}</td>
              </tr>
            ))}
          </DataTable>
          <ListEnd list={list} noun="score" order="newest" pageSize={PAGE_SIZE} />
        </>
      )}
    </section>
  );
}
