import type { EvaluationCase } from "@kiln/sdk";
import { useCallback, useState } from "react";
import { useAction } from "./action.js";
import { EvaluationCases } from "./evaluation-cases.js";
import { EvaluationHistory } from "./evaluation-history.js";
import type { PageProps } from "./router.js";
import { ActButton, CheckList, ErrorBox, Field } from "./ui.js";

/**
 * A skill's evaluations: its cases (edited, imported, exported), a run against draft and/or
 * published with repeats (opening the run's report), and the runs before it, two of them compared.
 */
export function Evaluations({
  kiln,
  session,
  skillId,
  navigate,
  inputSchema,
}: PageProps & { skillId: string; inputSchema: unknown }) {
  const [against, setAgainst] = useState<string[]>([]);
  const [repeats, setRepeats] = useState("1");
  const [count, setCount] = useState<number | null>(null);
  const { error, act } = useAction();
  const onCases = useCallback((cases: EvaluationCase[]) => setCount(cases.length), []);
  async function start() {
    const n = Number(repeats);
    const started = await kiln.evaluations.run(skillId, {
      organizationId: session.organizationId,
      ...(against.length > 0 ? { targets: against } : {}),
      ...(n > 1 ? { repeats: n } : {}),
    });
    navigate(`/skills/${skillId}/evaluations/${started.evaluationRunId}`);
  }
  return (
    <section aria-labelledby="evaluations" className="evaluations">
      <h2 id="evaluations">Evaluations</h2>
      <EvaluationCases kiln={kiln} session={session} skillId={skillId} inputSchema={inputSchema} onCases={onCases} />
      <section aria-labelledby="run-heading" className="card">
        <h3 id="run-heading">Run an evaluation</h3>
        <ErrorBox error={error} />
        <div className="run-eval">
          <span>
            {count === null ? "…" : `${count} case${count === 1 ? "" : "s"}.`}{" "}
            <CheckList
              values={["draft", "published"]}
              chosen={against}
              onChange={setAgainst}
              label={(t) => `against ${t}`}
              className="check inline"
            />
          </span>
          <Field label="Attempts per case (1–20)" type="number" value={repeats} onChange={setRepeats} />
          <ActButton act={act} run={start} disabled={!count}>
            Run evaluation
          </ActButton>
        </div>
        <p className="hint">Neither chosen: whichever of draft and published exist. More attempts show flaky cases.</p>
      </section>
      <EvaluationHistory kiln={kiln} skillId={skillId} navigate={navigate} />
    </section>
  );
}
