/**
 * Two evaluation runs of a skill compared case by case on one target (the API's compare): which
 * cases changed verdict, and for each case whose output changed, a word diff of the outputs.
 */

import type { EvaluationCase, EvaluationComparison, EvaluationRun, Skill } from "@kiln/sdk";
import { Fragment, useCallback, useState } from "react";
import { useAction, useLoaded } from "./action.js";
import { allCases } from "./evaluation-cases.js";
import { attemptsPassed, caseNamer, changeText, verdictClass } from "./evaluation-format.js";
import type { PageProps } from "./router.js";
import { formatDate } from "./run-format.js";
import { ErrorBox, Link, Pending, TableWrap } from "./ui.js";
import { type DiffPart, DiffParts } from "./word-diff.js";

interface Loaded {
  comparison: EvaluationComparison;
  base: EvaluationRun;
  head: EvaluationRun;
  /** The word diff of the outputs, by case; jsdiff is loaded with this page only. */
  diffs: Map<string, DiffPart[]>;
}

const outputOf = (run: EvaluationRun, target: string, caseId: string) => {
  const t = run.results.find((r) => r.caseId === caseId)?.byTarget[target];
  return t?.output?.text ?? t?.error?.message ?? "";
};

type Side = EvaluationComparison["results"][number]["base"];

function SideCell({ side }: { side: Side }) {
  if (!side) return <td>not in this run</td>;
  return (
    <td className="nowrap">
      <span className={verdictClass(side.verdict)}>{side.verdict}</span>{" "}
      <span className="hint">{attemptsPassed(side.passRate, side.attempts)}</span>
    </td>
  );
}

export function EvaluationCompare({
  kiln,
  navigate,
  skillId,
  baseId,
  headId,
}: PageProps & { skillId: string; baseId: string; headId: string }) {
  const { error, setError } = useAction();
  const [onlyChanged, setOnlyChanged] = useState(false);
  const read = useCallback(async (): Promise<Loaded> => {
    const [comparison, base, head, { diffWords }] = await Promise.all([
      kiln.evaluations.compare(skillId, { base: baseId, head: headId }),
      kiln.evaluations.get(skillId, baseId),
      kiln.evaluations.get(skillId, headId),
      import("diff"),
    ]);
    const diffs = new Map(
      comparison.results.map((r) => [
        r.caseId,
        diffWords(outputOf(base, comparison.base.target, r.caseId), outputOf(head, comparison.head.target, r.caseId)),
      ]),
    );
    return { comparison, base, head, diffs };
  }, [kiln, skillId, baseId, headId]);
  const loaded = useLoaded<Loaded>(read, setError).value;
  const readSkill = useCallback(() => kiln.skills.get(skillId), [kiln, skillId]);
  const skill = useLoaded<Skill>(readSkill, setError).value;
  const readCases = useCallback(() => allCases(kiln, skillId), [kiln, skillId]);
  const cases = useLoaded<EvaluationCase[]>(readCases, setError).value;
  if (!loaded) return <Pending error={error} what="the comparison" />;
  const { comparison, base, head, diffs } = loaded;
  const nameOf = caseNamer(cases);
  const rows = comparison.results.map((r) => {
    const parts = diffs.get(r.caseId) ?? [];
    const verdictChanged = r.base?.verdict !== r.head?.verdict;
    return { r, parts, verdictChanged, outputChanged: parts.some((p) => p.added || p.removed) };
  });
  const shown = onlyChanged ? rows.filter((x) => x.verdictChanged || x.outputChanged) : rows;
  const report = (id: string) => `/skills/${skillId}/evaluations/${id}`;
  return (
    <main className="eval-compare">
      <p className="crumbs">
        <Link to={`/skills/${skillId}`} navigate={navigate}>
          {skill?.name ?? "Skill"}
        </Link>{" "}
        › Evaluations › Compare
      </p>
      <h1>Compare evaluation runs</h1>
      <ErrorBox error={error} />
      <dl className="summary">
        {(
          [
            ["Base (before)", base, comparison.base],
            ["Head (after)", head, comparison.head],
          ] as const
        ).map(([label, run, side]) => (
          <Fragment key={label}>
            <dt>{label}</dt>
            <dd>
              <Link to={report(run.id)} navigate={navigate}>
                {formatDate(run.createdAt)}
              </Link>{" "}
              · {side.target} · {side.repeats} attempt{side.repeats === 1 ? "" : "s"}
            </dd>
          </Fragment>
        ))}
      </dl>
      <p role="status">{comparison.summary.text}</p>
      <label className="check">
        <input type="checkbox" checked={onlyChanged} onChange={(e) => setOnlyChanged(e.target.checked)} /> Only cases
        whose verdict or output changed
      </label>
      <TableWrap label="Compared cases">
        <table>
          <thead>
            <tr>
              <th scope="col">Case</th>
              <th scope="col">Base</th>
              <th scope="col">Head</th>
              <th scope="col">Change</th>
              <th scope="col">Output (base → head)</th>
            </tr>
          </thead>
          <tbody>
            {shown.map(({ r, parts, verdictChanged, outputChanged }) => (
              <tr key={r.caseId} className={verdictChanged ? "changed" : undefined}>
                <th scope="row">{nameOf(r.caseId)}</th>
                <SideCell side={r.base} />
                <SideCell side={r.head} />
                <td>
                  <span className={verdictClass(r.change ?? "")}>{changeText(r.change)}</span>
                  {verdictChanged && <span className="hint"> verdict changed</span>}
                </td>
                <td className="content">
                  {outputChanged ? <DiffParts parts={parts} /> : <span className="hint">same output</span>}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableWrap>
    </main>
  );
}
