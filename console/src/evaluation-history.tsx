/**
 * Past evaluation runs, newest first, a page at a time (the SDK's pagination): a skill's, two of
 * them picked to compare, or a prompt's.
 */

import type { EvaluationRunListItem, Kiln, PaginatedList, PromptEvaluationListItem } from "@kiln/sdk";
import { useEffect, useState } from "react";
import { isDone, percent } from "./evaluation-format.js";
import { usePagedList } from "./paged-list.js";
import type { Navigate } from "./router.js";
import { formatCost, formatDate } from "./run-format.js";
import { DataTable, Empty, ErrorBox, Link, Loading, SelectField } from "./ui.js";

const PAGE_SIZE = 20;

/** A run in a picker: when, what, how well (and the id's end, to tell apart two runs of the same second). */
type Listed = EvaluationRunListItem | PromptEvaluationListItem;
const targetNames = (r: Listed) => r.targets.map((t) => ("key" in t ? t.key : t.label)).join(", ");

const runLabel = (r: Listed) => `${formatDate(r.createdAt)} · ${passCell(r)} · …${r.id.slice(-4)}`;

function passCell(r: Listed) {
  if (!r.summary) return "—";
  return Object.entries(r.summary.byTarget)
    .map(([label, t]) => `${label} ${percent(t.passRate)}${t.flaky > 0 ? ` (${t.flaky} flaky)` : ""}`)
    .join(", ");
}

function costCell(r: Listed) {
  if (!r.summary) return "—";
  const costs = Object.values(r.summary.byTarget).map((t) => t.totalCostUsd);
  return formatCost(costs.includes(null) ? null : costs.reduce<number>((a, c) => a + (c ?? 0), 0));
}

/** A skill's runs (comparable in pairs) or, with `promptId`, a prompt's evaluations. */
export function EvaluationHistory({
  kiln,
  skillId,
  promptId,
  navigate,
}: {
  kiln: Kiln;
  navigate: Navigate;
} & ({ skillId: string; promptId?: undefined } | { promptId: string; skillId?: undefined })) {
  const { items: runs, more, loading, error, start, next } = usePagedList<Listed>();
  const [base, setBase] = useState("");
  const [head, setHead] = useState("");
  useEffect(() => {
    const list: PaginatedList<Listed> = promptId
      ? kiln.promptEvaluations.list(promptId, { limit: PAGE_SIZE })
      : kiln.evaluations.listRuns(skillId ?? "", { limit: PAGE_SIZE });
    start(list.pages());
  }, [kiln, skillId, promptId, start]);
  const comparable = skillId ? (runs ?? []).filter((r) => r.status === "completed" || r.status === "cancelled") : [];
  useEffect(() => {
    // The newest two by default: head the latest, base the one before.
    if (comparable.length >= 2 && !head && !base) {
      setHead(comparable[0]?.id ?? "");
      setBase(comparable[1]?.id ?? "");
    }
  }, [comparable, head, base]);
  const reportPath = (id: string) =>
    promptId ? `/prompts/${promptId}/evaluations/${id}` : `/skills/${skillId}/evaluations/${id}`;
  return (
    <section aria-labelledby="history-heading">
      <h3 id="history-heading">Past runs</h3>
      <ErrorBox error={error} />
      {runs === null ? (
        <Loading what="evaluation runs" />
      ) : runs.length === 0 ? (
        <Empty>No evaluation {promptId ? "" : "run "}yet: run one above.</Empty>
      ) : (
        <>
          <DataTable
            label="Evaluation runs"
            columns={["Started", "Status", "Targets", "Attempts", "Pass rate", "Cost", "Summary"]}
          >
            {runs.map((r) => (
              <tr key={r.id} className={r.status === "failed" ? "run-failed" : undefined}>
                <td className="nowrap">
                  <Link to={reportPath(r.id)} navigate={navigate}>
                    {formatDate(r.createdAt)}
                  </Link>
                </td>
                <td>
                  <span
                    className={`badge status-${r.status === "completed" ? "succeeded" : isDone(r.status) ? "failed" : "running"}`}
                  >
                    {r.status}
                  </span>
                </td>
                <td className="nowrap">{targetNames(r)}</td>
                <td className="num">{r.repeats}</td>
                <td className="nowrap">{passCell(r)}</td>
                <td className="num">{costCell(r)}</td>
                <td className="content">{r.summary?.text ?? "—"}</td>
              </tr>
            ))}
          </DataTable>
          <p className="list-end">
            {runs.length} run{runs.length === 1 ? "" : "s"} shown{more ? ", newest first." : ": that is all of them."}{" "}
            {more && (
              <button type="button" className="secondary" disabled={loading} onClick={() => void next()}>
                {loading ? "Loading…" : `Load ${PAGE_SIZE} more`}
              </button>
            )}
          </p>
        </>
      )}
      {comparable.length >= 2 && (
        <form
          className="compare-pick"
          onSubmit={(e) => {
            e.preventDefault();
            navigate(`/skills/${skillId}/evaluations/${base}/compare/${head}`);
          }}
        >
          {(
            [
              ["compare-base", "Compare: base (before)", base, setBase],
              ["compare-head", "with head (after)", head, setHead],
            ] as const
          ).map(([id, label, value, onChange]) => (
            <SelectField key={id} id={id} label={label} value={value} onChange={onChange}>
              {comparable.map((r) => (
                <option key={r.id} value={r.id}>
                  {runLabel(r)}
                </option>
              ))}
            </SelectField>
          ))}
          <button type="submit" disabled={!base || !head || base === head}>
            Compare the two runs
          </button>
        </form>
      )}
    </section>
  );
}
