/** One case of an evaluation report: its input, and per target the verdict, output, reasons, attempts and runs. */
import type { EvaluationCase, EvaluationRun } from "@kiln/sdk";
import { attemptsPassed, changeText, verdictClass } from "./evaluation-format.js";
import type { Navigate } from "./router.js";
import { exactCost, formatCost, formatLatency } from "./run-format.js";
import { Link } from "./ui.js";

/** A case's (or, in a prompt evaluation, a dataset item's) outcomes by target. */
type Result = Pick<EvaluationRun["results"][number], "byTarget" | "change">;
type TargetResult = Result["byTarget"][string];

/** A value as a reader sees it: text as it is, anything else as JSON. */
export const textOf = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v));

/** Past this many characters, a reason (a judge's, say) is cut, the whole of it a click away. */
const SHORT = 200;

function Reason({ text }: { text: string }) {
  if (text.length <= SHORT) return <>: {text}</>;
  return (
    <details className="reason">
      <summary>: {text.slice(0, SHORT)}…</summary>
      {text}
    </details>
  );
}

function TargetPanel({ label, t, navigate }: { label: string; t: TargetResult; navigate: Navigate }) {
  const judgeCost = t.attempts.flatMap((a) => a.judgeRuns);
  return (
    <div className="eval-target">
      <h4>
        {label}: <span className={verdictClass(t.verdict)}>{t.verdict}</span>{" "}
        <span className="hint">
          {attemptsPassed(t.passRate, t.attempts.length)} · {formatLatency(t.latencyMs)} ·{" "}
          <span title={exactCost(t.estimatedCostUsd)}>{formatCost(t.estimatedCostUsd)}</span>
        </span>
      </h4>
      {t.error ? (
        <p className="run-error">
          {t.error.code}: {t.error.message}
        </p>
      ) : (
        <pre className="output">{t.output?.text ?? "(no output)"}</pre>
      )}
      {t.assertions.length > 0 && (
        <ul className="reasons" aria-label={`${label} assertions`}>
          {t.assertions.map((a, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: assertions are listed in the case's order
            <li key={i}>
              <span className={verdictClass(a.passed ? "pass" : "fail")}>{a.passed ? "pass" : "fail"}</span>{" "}
              <strong>{a.type.replace(/_/g, " ")}</strong>
              {a.message && <Reason text={a.message} />}
            </li>
          ))}
        </ul>
      )}
      {t.contractValid === false && <p className="run-error">The output does not match the output schema.</p>}
      <details>
        <summary>
          {t.attempts.length} attempt{t.attempts.length === 1 ? "" : "s"}
          {judgeCost.length > 0 && `, ${judgeCost.length} judge run${judgeCost.length === 1 ? "" : "s"}`}
        </summary>
        <ol className="attempts">
          {t.attempts.map((a) => (
            <li key={a.attempt}>
              <span className={verdictClass(a.outcome)}>{a.outcome}</span> {formatLatency(a.latencyMs)} ·{" "}
              <span title={exactCost(a.estimatedCostUsd)}>{formatCost(a.estimatedCostUsd)}</span>
              {a.runId && (
                <>
                  {" "}
                  ·{" "}
                  <Link to={`/runs/${a.runId}`} navigate={navigate}>
                    {label} run, attempt {a.attempt}
                  </Link>
                </>
              )}
              {a.judgeRuns.map((j, i) => (
                <span key={j.runId}>
                  {" "}
                  ·{" "}
                  <Link to={`/runs/${j.runId}`} navigate={navigate}>
                    judge run {i + 1}
                  </Link>{" "}
                  <span title={exactCost(j.estimatedCostUsd)}>({formatCost(j.estimatedCostUsd)})</span>
                </span>
              ))}
            </li>
          ))}
        </ol>
      </details>
    </div>
  );
}

export function EvaluationResultCard({
  result,
  title,
  evaluationCase,
  targets,
  navigate,
}: {
  result: Result;
  title: string;
  /** What was run and expected: the case's, or the dataset item's. */
  evaluationCase: Pick<EvaluationCase, "input" | "expectedOutput"> | null;
  targets: string[];
  navigate: Navigate;
}) {
  const verdicts = targets.map((t) => result.byTarget[t]?.verdict);
  const worst = verdicts.includes("failed") ? "failed" : verdicts.includes("flaky") ? "flaky" : "passed";
  return (
    <article className={`card eval-case verdict-${worst}`} aria-label={`Case ${title}`}>
      <div className="eval-case-title">
        <h3>{title}</h3>
        {result.change && <span className={verdictClass(result.change)}>{changeText(result.change)}</span>}
      </div>
      {evaluationCase && (
        <dl className="summary">
          <dt>Input</dt>
          <dd>
            <code>{JSON.stringify(evaluationCase.input)}</code>
          </dd>
          {evaluationCase.expectedOutput !== null && (
            <>
              <dt>Expected</dt>
              <dd>
                <code>{textOf(evaluationCase.expectedOutput)}</code>
              </dd>
            </>
          )}
        </dl>
      )}
      <div className="eval-targets">
        {targets.map((label) => {
          const t = result.byTarget[label];
          return t ? <TargetPanel key={label} label={label} t={t} navigate={navigate} /> : null;
        })}
      </div>
    </article>
  );
}
