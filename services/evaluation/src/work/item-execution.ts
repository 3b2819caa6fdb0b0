/**
 * The execution calls of one work item (work/evaluation-workers.ts takes the items): the case's
 * run on its target's version, and the llm_judge calls that grade it. Both act as the evaluation
 * service in the run's organization only (docs/security.md "Service principals").
 */
import type { Client } from "@connectrpc/connect";
import type { BusMessage } from "@kiln/kit/bus";
import { DomainError } from "@kiln/kit/errors";
import { jsonText, jsonTextOf } from "@kiln/kit/json-text";
import { actingFor } from "@kiln/kit/principal";
import { domainErrorOf } from "@kiln/kit/rpc/errors";
import { IDEMPOTENCY_KEY_HEADER } from "@kiln/kit/rpc/idempotency";
import type { Store } from "@kiln/kit/store";
import type { ExecutionService, Run } from "@kiln/proto/execution";
import { EVALUATION_SERVICE } from "../access.js";
import type { Judge } from "../domain/assertions.js";
import { JUDGE_SCHEMA, JUDGE_SYSTEM, judgeUserMessage, parseJudgeVerdict } from "../domain/judge-prompt.js";
import type { JudgeRun } from "../domain/report.js";
import { usageOfMessage } from "../domain/usage.js";
import type { CaseDoc, EvaluationRunDoc, TargetDoc } from "../store/evaluation-store.js";

/** The execution calls the workers make, always as the evaluation service acting in the run's organization. */
export type ExecutionClient = Pick<Client<typeof ExecutionService>, "runSkill" | "runPrompt" | "complete">;

/** What running an item gave: the run (whatever its status), or a failure that is the case's own. */
export type Executed = { run: Run } | { error: { code: string; message: string } };

/** A failure worth another delivery (the execution service unreachable, or still running the item). */
export class RetryLater extends Error {}

/** The provider rate-limited the item's run: deliver it again after the wait it asked for. */
export class RateLimited extends Error {
  constructor(
    readonly retries: number,
    readonly retryAfterMs: number | undefined,
  ) {
    super("the model provider rate-limited the run");
  }
}

/** How many times one item's run was rate-limited, so that its next run is a new run. */
interface RateLimitDoc {
  _id: string;
  retries: number;
}

/** The judge's response format, as execution's Complete takes it. */
const JUDGE_SCHEMA_TEXT = jsonText(JUDGE_SCHEMA);

export interface ItemExecutionDeps {
  store: Store;
  execution: ExecutionClient;
  /** Aborts every call in flight when the workers stop. */
  signal: AbortSignal;
  /** Deadline of one RunSkill call. */
  caseTimeoutMs: number;
  /** Deliveries of an item the execution service could not take before it is recorded as an error. */
  maxAttempts: number;
  /** Runs of one item the provider may rate-limit before the item is recorded as the failed run it gave. */
  maxRateLimitRetries: number;
}

export interface ItemExecution {
  /** How many times the item's run was rate-limited so far (read only on a redelivery). */
  rateLimitedRuns(msg: BusMessage, itemId: string): Promise<number>;
  /**
   * Runs the case on the target: the skill's version, or a prompt evaluation's version (on its
   * model). A failure that is the case's own becomes its "error" result.
   */
  execute(
    msg: BusMessage,
    run: EvaluationRunDoc,
    kase: CaseDoc,
    target: TargetDoc,
    itemId: string,
    retries: number,
  ): Promise<Executed>;
  /** The judge of one attempt; each call it makes is added to `calls`. */
  judgeFor(run: EvaluationRunDoc, kase: CaseDoc, calls: JudgeRun[]): Judge;
}

export function createItemExecution(deps: ItemExecutionDeps): ItemExecution {
  const rateLimits = deps.store.collection<RateLimitDoc>("evaluation_rate_limits");
  const callOptions = (run: EvaluationRunDoc) => ({
    signal: deps.signal,
    // The run's organization is the only one these calls act in (docs/security.md "Service principals").
    contextValues: actingFor(EVALUATION_SERVICE, run.organizationId),
  });

  return {
    async rateLimitedRuns(msg, itemId) {
      return msg.deliveryCount > 1 ? ((await rateLimits.findOne({ _id: itemId }))?.retries ?? 0) : 0;
    },

    async execute(msg, run, kase, target, itemId, retries) {
      // A rate-limited run stays stored as failed; the next run of the item gets a key of its own.
      const idempotencyKey = retries === 0 ? itemId : `${itemId}:${retries}`;
      const options = {
        ...callOptions(run),
        timeoutMs: deps.caseTimeoutMs,
        // A redelivery after a crash replays the run the first delivery stored rather than running the case twice.
        headers: { [IDEMPOTENCY_KEY_HEADER]: idempotencyKey },
      };
      let res: { run?: Run };
      try {
        res = run.promptId
          ? await deps.execution.runPrompt(
              {
                organizationId: run.organizationId,
                promptId: run.promptId,
                variables: jsonTextOf(kase.inputJson),
                versionId: target.promptVersionId ?? "",
                model: target.model ?? "",
                evaluationRunId: run._id,
                // Every attempt is the model's own answer, never one the response cache kept.
                cache: { ttlSeconds: 0, noStore: true },
              },
              options,
            )
          : await deps.execution.runSkill(
              {
                organizationId: run.organizationId,
                skillId: run.skillId,
                input: jsonTextOf(kase.inputJson),
                versionId: target.skillVersionId,
                evaluationRunId: run._id,
              },
              options,
            );
      } catch (e) {
        if (deps.signal.aborted) throw e;
        const error = e instanceof DomainError ? e : domainErrorOf(e);
        const transient =
          !error ||
          error.kind === "unavailable" ||
          (error.kind === "failed_precondition" && error.message.includes("Idempotency-Key"));
        if (transient && msg.deliveryCount < deps.maxAttempts) throw new RetryLater(error?.message ?? String(e));
        const what = run.promptId ? "prompt" : "skill";
        return {
          error: { code: error?.kind ?? "internal", message: error?.message ?? `the ${what} could not be run` },
        };
      }
      if (!res.run) throw new Error("execution returned no run");
      const failure = res.run.status === "failed" ? res.run.error : undefined;
      if (failure?.rateLimited && retries < deps.maxRateLimitRetries) {
        await rateLimits.updateOne({ _id: itemId }, { $set: { retries: retries + 1 } }, { upsert: true });
        throw new RateLimited(retries + 1, failure.retryAfterMs);
      }
      return { run: res.run };
    },

    judgeFor(run, kase, calls) {
      return judgeOf(deps, run.organizationId, { ...kase, evaluationRunId: run._id }, calls);
    },
  };
}

/**
 * A judge that grades outputs by llm_judge assertions in one organization: each grade is a
 * Complete call (a judge run, stored with its cost by execution) added to `calls`. `material` is
 * what the judge reads beside the output: the input and, for a case, its expected output.
 */
export function judgeOf(
  deps: { execution: Pick<ExecutionClient, "complete">; signal: AbortSignal },
  organizationId: string,
  /** What is graded; `evaluationRunId`: the evaluation run the judge runs are made for, if any. */
  material: { inputJson: string; expectedOutputJson: string | null; evaluationRunId?: string },
  calls: JudgeRun[],
): Judge {
  return async (assertion, outputText) => {
    let res: Awaited<ReturnType<ExecutionClient["complete"]>>;
    try {
      res = await deps.execution.complete(
        {
          organizationId,
          model: assertion.model ?? "",
          system: JUDGE_SYSTEM,
          // The graded output is data in a fence it cannot close (domain/judge-prompt.ts).
          user: judgeUserMessage({
            rubric: assertion.rubric,
            inputJson: material.inputJson,
            expectedOutputJson: material.expectedOutputJson,
            output: outputText,
          }),
          responseSchema: JUDGE_SCHEMA_TEXT,
          evaluationRunId: material.evaluationRunId ?? "",
        },
        // The organization is the only one these calls act in (docs/security.md "Service principals").
        { signal: deps.signal, contextValues: actingFor(EVALUATION_SERVICE, organizationId) },
      );
    } catch (e) {
      throw e instanceof DomainError ? e : (domainErrorOf(e) ?? e);
    }
    calls.push({
      runId: res.runId,
      usage: usageOfMessage(res.usage),
      estimatedCostUsd: res.estimatedCostUsd ?? null,
    });
    // Read from the structured answer alone, checked exactly: never a search of text that may echo the output.
    return parseJudgeVerdict(res.structured?.json);
  };
}
