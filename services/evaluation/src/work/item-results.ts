/**
 * The result of one work item (one attempt of a case on one target): the run it gave checked
 * against the case's assertions and its target's output contract, or the error that stood in
 * for the run.
 */
import {
  type Assertion,
  type AssertionResult,
  effectiveAssertions,
  evaluateAssertions,
  type Judge,
  type Observation,
} from "../domain/assertions.js";
import { contractCheckOf, outcomeOf } from "../domain/report.js";
import { usageOfMessage } from "../domain/usage.js";
import type { CaseDoc, ResultDoc } from "../store/evaluation-store.js";
import type { Executed } from "./item-execution.js";

/** What names a result: its item and the attempt. */
export type ResultBase = Pick<ResultDoc, "_id" | "evaluationRunId" | "caseId" | "label" | "attempt">;

/** The result of an item that could not be run: no output, nothing checked. */
export function errorResult(base: ResultBase, error: { code: string; message: string }, createdAt: Date): ResultDoc {
  return {
    ...base,
    outcome: "error",
    runId: "",
    outputJson: null,
    assertionsJson: "[]",
    contractValid: null,
    contractMessage: null,
    latencyMs: 0,
    estimatedCostUsd: null,
    error,
    createdAt,
  };
}

/** The result of an item's run: its output checked by the case's assertions (`judge` grades the llm_judge ones). */
export async function resultOf(
  base: ResultBase,
  executed: Executed,
  kase: CaseDoc,
  outputSchemaJson: string,
  judge: Judge,
  now: () => Date,
): Promise<ResultDoc> {
  if ("error" in executed) return errorResult(base, executed.error, now());
  const run = executed.run;
  const succeeded = run.status === "succeeded" && run.output !== undefined;
  const output = succeeded ? (JSON.parse(run.output?.json ?? "null") as Observation["output"]) : null;
  const observation: Observation = {
    output,
    latencyMs: Number(run.latencyMs),
    estimatedCostUsd: run.estimatedCostUsd ?? null,
  };
  const assertions = effectiveAssertions(
    JSON.parse(kase.assertionsJson) as Assertion[],
    kase.expectedOutputJson === null ? undefined : JSON.parse(kase.expectedOutputJson),
  );
  const checked: AssertionResult[] = await evaluateAssertions(assertions, observation, judge);
  const contract = contractCheckOf(JSON.parse(outputSchemaJson || "{}"), output);
  return {
    ...base,
    outcome: outcomeOf(succeeded, checked),
    runId: run.id,
    outputJson: output === null ? null : JSON.stringify(output),
    assertionsJson: JSON.stringify(checked),
    contractValid: contract.contractValid,
    contractMessage: contract.message,
    latencyMs: observation.latencyMs,
    estimatedCostUsd: observation.estimatedCostUsd,
    usage: run.usage ? usageOfMessage(run.usage) : null,
    error: succeeded
      ? null
      : run.error
        ? { code: run.error.code, message: run.error.message }
        : { code: "failed", message: "the run failed" },
    createdAt: now(),
  };
}
