/**
 * The evaluation workers: every replica (and any worker-only process) consumes the EVALUATIONS
 * work queue through one shared durable consumer, so each case × target goes to one worker at a
 * time. Delivery is at least once; the result's insert on its unique `_id` makes a redelivered
 * item harmless, and the last result in completes the run.
 */
import type { Client } from "@connectrpc/connect";
import type { Bus, BusMessage, Subscription } from "@kiln/kit/bus";
import { DomainError } from "@kiln/kit/errors";
import { jsonText, jsonTextOf } from "@kiln/kit/json-text";
import { retryStartupStep } from "@kiln/kit/lifecycle";
import type { Logger } from "@kiln/kit/logger";
import { actingFor } from "@kiln/kit/principal";
import { domainErrorOf } from "@kiln/kit/rpc/errors";
import { IDEMPOTENCY_KEY_HEADER } from "@kiln/kit/rpc/idempotency";
import { isDuplicateKeyError, type Store } from "@kiln/kit/store";
import type { ExecutionService, Run } from "@kiln/proto/execution";
import { createWebhookDispatcher, type Dispatcher, type WebhookOptions } from "@kiln/webhooks-lib";
import { LRUCache } from "lru-cache";
import { EVALUATION_SERVICE } from "../access.js";
import {
  type Assertion,
  type AssertionResult,
  effectiveAssertions,
  evaluateAssertions,
  type Judge,
  type Observation,
} from "../domain/assertions.js";
import { JUDGE_SCHEMA, JUDGE_SYSTEM, judgeUserMessage, parseJudgeVerdict } from "../domain/judge-prompt.js";
import { contractCheckOf, type JudgeRun, outcomeOf } from "../domain/report.js";
import { createRunCompletion, EVALUATION_EVENTS_STREAM, evaluationEventOutbox } from "../run-completion.js";
import {
  type CaseDoc,
  caseIdsOf,
  type EvaluationRunDoc,
  evaluationCollections,
  type ResultDoc,
  resultIdOf,
  updateProgress,
} from "../store/evaluation-store.js";
import { EVALUATIONS_STREAM, WORKERS_DURABLE, type WorkItem } from "./work-queue.js";

/** The execution calls the workers make, always as the evaluation service acting in the run's organization. */
export type ExecutionClient = Pick<Client<typeof ExecutionService>, "runSkill" | "complete">;

export interface EvaluationWorkersDeps {
  bus: Bus;
  store: Store;
  execution: ExecutionClient;
  logger: Logger;
  /** Items this process handles at the same time (EVALUATION_WORKER_CONCURRENCY). */
  concurrency: number;
  /** Redelivery after this long without an ack or a `working()` (EVALUATION_ACK_WAIT_MS). */
  ackWaitMs: number;
  /** Deadline of one RunSkill call; default 5 minutes. */
  caseTimeoutMs?: number;
  /** Deliveries of an item the execution service could not take before it is recorded as an error; default 5. */
  maxAttempts?: number;
  /** First retry delay after a transient failure, doubled per delivery up to 30 s; default 1000 ms. */
  retryDelayMs?: number;
  /**
   * Runs of one item the provider may rate-limit (429) before the item is recorded as the failed
   * run it gave; default 20. Each waits what the provider asked (Retry-After), else an exponential
   * backoff with jitter from `retryDelayMs`.
   */
  maxRateLimitRetries?: number;
  /** The webhook dispatcher this process runs beside its workers (docs/webhooks.md); `false`: none. */
  webhooks?: WebhookOptions | false;
  now?: () => Date;
}

export interface EvaluationWorkers {
  start(): Promise<void>;
  /**
   * Stops taking work and waits for the items in hand; after `graceMs` their calls are aborted and
   * the items nak'ed, so another worker gets them again. Nothing half-done is stored.
   */
  stop(graceMs?: number): Promise<void>;
}

/** A failure worth another delivery (the execution service unreachable, or still running the item). */
class RetryLater extends Error {}

/** The provider rate-limited the item's run: deliver it again after the wait it asked for. */
class RateLimited extends Error {
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

export function createEvaluationWorkers(deps: EvaluationWorkersDeps): EvaluationWorkers {
  const c = evaluationCollections(deps.store);
  const events = evaluationEventOutbox(deps.store, deps.bus, deps.logger);
  const completion = createRunCompletion(c, events);
  let dispatcher: Dispatcher | undefined;
  const now = deps.now ?? (() => new Date());
  const maxAttempts = deps.maxAttempts ?? 5;
  const maxRateLimitRetries = deps.maxRateLimitRetries ?? 20;
  const rateLimits = deps.store.collection<RateLimitDoc>("evaluation_rate_limits");
  const retryDelayMs = deps.retryDelayMs ?? 1_000;
  const aborter = new AbortController();
  let subscription: Subscription | undefined;

  /**
   * The cases of the runs this process is working on, each run's read in one query when its first
   * item arrives (cases cannot change): one read per case would scan the cases on FerretDB.
   */
  const casesOfRun = new LRUCache<string, Promise<Map<string, CaseDoc>>>({ max: 16 });
  async function caseOf(run: EvaluationRunDoc, caseId: string): Promise<CaseDoc | null> {
    let cases = casesOfRun.get(run._id);
    if (!cases) {
      cases = c.cases.find({ _id: { $in: caseIdsOf(run) } }).then((docs) => new Map(docs.map((d) => [d._id, d])));
      cases.catch(() => casesOfRun.delete(run._id));
      casesOfRun.set(run._id, cases);
    }
    // A case deleted since the run started is not in the map: read it to be sure.
    return (await cases).get(caseId) ?? (await c.cases.findOne({ _id: caseId }));
  }

  /**
   * The runs this process works on, read once each (what an item needs of them does not change;
   * cancellation is read from the run's progress document): a run document holds every case id,
   * and FerretDB decodes the whole row on every read. Marks a queued run running on first sight.
   */
  const runs = new LRUCache<string, Promise<EvaluationRunDoc | null>>({ max: 16 });
  function runOf(id: string): Promise<EvaluationRunDoc | null> {
    let found = runs.get(id);
    if (!found) {
      found = c.runs.findOne({ _id: id }).then(async (run) => {
        if (run?.status === "queued") {
          await c.runs.updateOne({ _id: run._id, status: "queued" }, { $set: { status: "running" } });
        }
        return run;
      });
      found.then(
        (run) => run ?? runs.delete(id),
        () => runs.delete(id),
      );
      runs.set(id, found);
    }
    return found;
  }

  const backoffMs = (deliveryCount: number) => Math.min(retryDelayMs * 2 ** (deliveryCount - 1), 30_000);
  /** The provider's wait when it gave one, else exponential backoff; with ±50% jitter so retries spread out. */
  const rateLimitDelayMs = (e: RateLimited) =>
    Math.round((e.retryAfterMs ?? backoffMs(e.retries)) * (0.5 + Math.random()));

  /** The judge of one attempt; each call it makes is added to `calls`. */
  function judgeFor(run: EvaluationRunDoc, kase: CaseDoc, calls: JudgeRun[]): Judge {
    return async (assertion, outputText) => {
      let res: Awaited<ReturnType<ExecutionClient["complete"]>>;
      try {
        res = await deps.execution.complete(
          {
            organizationId: run.organizationId,
            model: assertion.model ?? "",
            system: JUDGE_SYSTEM,
            // The graded output is data in a fence it cannot close (domain/judge-prompt.ts).
            user: judgeUserMessage({
              rubric: assertion.rubric,
              inputJson: kase.inputJson,
              expectedOutputJson: kase.expectedOutputJson,
              output: outputText,
            }),
            responseSchema: JUDGE_SCHEMA_TEXT,
          },
          { signal: aborter.signal, contextValues: actingFor(EVALUATION_SERVICE, run.organizationId) },
        );
      } catch (e) {
        throw e instanceof DomainError ? e : (domainErrorOf(e) ?? e);
      }
      calls.push({
        runId: res.runId,
        usage: { inputTokens: Number(res.usage?.inputTokens ?? 0), outputTokens: Number(res.usage?.outputTokens ?? 0) },
        estimatedCostUsd: res.estimatedCostUsd ?? null,
      });
      // Read from the structured answer alone, checked exactly: never a search of text that may echo the output.
      return parseJudgeVerdict(res.structured?.json);
    };
  }

  /** Runs the case on the target's version. A failure that is the case's own becomes its "error" result. */
  async function execute(
    msg: BusMessage,
    run: EvaluationRunDoc,
    kase: CaseDoc,
    skillVersionId: string,
    itemId: string,
    retries: number,
  ): Promise<{ run: Run } | { error: { code: string; message: string } }> {
    // A rate-limited run stays stored as failed; the next run of the item gets a key of its own.
    const idempotencyKey = retries === 0 ? itemId : `${itemId}:${retries}`;
    let res: Awaited<ReturnType<ExecutionClient["runSkill"]>>;
    try {
      res = await deps.execution.runSkill(
        {
          organizationId: run.organizationId,
          skillId: run.skillId,
          input: jsonTextOf(kase.inputJson),
          versionId: skillVersionId,
        },
        {
          signal: aborter.signal,
          // The run's organization is the only one these calls act in (docs/security.md "Service principals").
          contextValues: actingFor(EVALUATION_SERVICE, run.organizationId),
          timeoutMs: deps.caseTimeoutMs ?? 300_000,
          // A redelivery after a crash replays the run the first delivery stored rather than running the case twice.
          headers: { [IDEMPOTENCY_KEY_HEADER]: idempotencyKey },
        },
      );
    } catch (e) {
      if (aborter.signal.aborted) throw e;
      const error = e instanceof DomainError ? e : domainErrorOf(e);
      const transient =
        !error ||
        error.kind === "unavailable" ||
        (error.kind === "failed_precondition" && error.message.includes("Idempotency-Key"));
      if (transient && msg.deliveryCount < maxAttempts) throw new RetryLater(error?.message ?? String(e));
      return { error: { code: error?.kind ?? "internal", message: error?.message ?? "the skill could not be run" } };
    }
    if (!res.run) throw new Error("execution returned no run");
    const failure = res.run.status === "failed" ? res.run.error : undefined;
    if (failure?.rateLimited && retries < maxRateLimitRetries) {
      await rateLimits.updateOne({ _id: itemId }, { $set: { retries: retries + 1 } }, { upsert: true });
      throw new RateLimited(retries + 1, failure.retryAfterMs);
    }
    return { run: res.run };
  }

  async function handle(msg: BusMessage): Promise<void> {
    const item = msg.json<WorkItem>();
    const attempt = item.attempt ?? 0;
    const itemId = resultIdOf(item.evaluationRunId, item.caseId, item.label, attempt);
    const run = await runOf(item.evaluationRunId);
    if (!run) {
      deps.logger.warn({ itemId }, "evaluation work for a run that does not exist; dropped");
      return;
    }
    // Cancelled: what has not started is not run (its report keeps what finished).
    if ((await c.progress.findOne({ _id: run._id }))?.cancelled) return;
    // An item published again by the relay (a restarted embedded platform requeues its unfinished
    // runs) may have its result already: then it is not run again (its judges would be called
    // again). Not looked up otherwise (on FerretDB the lookup reads every result): a redelivery
    // after a crash replays the stored run and its result's insert finds the earlier one.
    if (item.again && (await c.results.findOne({ _id: itemId }, { projection: { _id: 1 } }))) {
      await completion.completeIfDone(run);
      return;
    }
    const rateLimited = msg.deliveryCount > 1 ? ((await rateLimits.findOne({ _id: itemId }))?.retries ?? 0) : 0;

    // The message stays ours until the item is done, storing included: a store that is slow to
    // answer must not send it to another worker while this one finishes it.
    const keepAlive = setInterval(() => msg.working(), Math.max(50, Math.floor(deps.ackWaitMs / 3)));
    keepAlive.unref();
    try {
      await runItem(run, item, itemId, attempt, rateLimited, msg);
    } finally {
      clearInterval(keepAlive);
    }
  }

  async function runItem(
    run: EvaluationRunDoc,
    item: WorkItem,
    itemId: string,
    attempt: number,
    rateLimited: number,
    msg: BusMessage,
  ): Promise<void> {
    const kase = await caseOf(run, item.caseId);
    const target = run.targets.find((t) => t.label === item.label);
    const base = { _id: itemId, evaluationRunId: run._id, caseId: item.caseId, label: item.label, attempt };
    let result: ResultDoc;
    if (!kase || !target) {
      result = {
        ...base,
        outcome: "error",
        runId: "",
        outputJson: null,
        assertionsJson: "[]",
        contractValid: null,
        contractMessage: null,
        latencyMs: 0,
        estimatedCostUsd: null,
        error: {
          code: "not_found",
          message: kase ? "the target is not part of this run" : "the case no longer exists",
        },
        createdAt: now(),
      };
    } else {
      const executed = await execute(msg, run, kase, target.skillVersionId, itemId, rateLimited);
      const judgeRuns: JudgeRun[] = [];
      result = await resultOf(base, executed, kase, target.outputSchemaJson, judgeFor(run, kase, judgeRuns));
      result.judgeRuns = judgeRuns;
    }
    try {
      await c.results.insertOne(result);
    } catch (e) {
      // Another delivery of this item got there first: its result stands, maybe uncounted (its
      // worker died in between), so the exact count decides (rare: only here).
      if (!isDuplicateKeyError(e)) throw e;
      await completion.completeIfDone(run);
      return;
    }
    await updateProgress(c.progress, run._id, { $inc: { resultsIn: 1 } });
    await completeIfCounted(run);
  }

  /**
   * Completes the run when its progress says every result is in, or it was cancelled meanwhile
   * (its report then takes a late result too). The exact count behind completeIfDone reads every
   * result, so it is made only then.
   */
  async function completeIfCounted(run: EvaluationRunDoc): Promise<void> {
    const progress = await c.progress.findOne({ _id: run._id });
    if (!progress || progress.cancelled || (progress.resultsIn ?? 0) >= run.itemCount) {
      await completion.completeIfDone(run);
    }
  }

  async function resultOf(
    base: Pick<ResultDoc, "_id" | "evaluationRunId" | "caseId" | "label" | "attempt">,
    executed: { run: Run } | { error: { code: string; message: string } },
    kase: CaseDoc,
    outputSchemaJson: string,
    judge: Judge,
  ): Promise<ResultDoc> {
    if ("error" in executed) {
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
        error: executed.error,
        createdAt: now(),
      };
    }
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
      usage: run.usage
        ? { inputTokens: Number(run.usage.inputTokens), outputTokens: Number(run.usage.outputTokens) }
        : null,
      error: succeeded
        ? null
        : run.error
          ? { code: run.error.code, message: run.error.message }
          : { code: "failed", message: "the run failed" },
      createdAt: now(),
    };
  }

  return {
    async start() {
      const consumer = { stream: EVALUATIONS_STREAM.name, durable: WORKERS_DURABLE, ackWaitMs: deps.ackWaitMs };
      // Both exist before the process reports started: a NATS that refuses them fails the start-up.
      await retryStartupStep(deps.logger, "the EVALUATIONS stream", () => deps.bus.ensureStream(EVALUATIONS_STREAM));
      await retryStartupStep(deps.logger, "the workers' consumer", () => deps.bus.ensureConsumer(consumer));
      await retryStartupStep(deps.logger, "the EVALUATION_EVENTS stream", () =>
        deps.bus.ensureStream(EVALUATION_EVENTS_STREAM),
      );
      events.start();
      if (deps.webhooks !== false) {
        dispatcher = await createWebhookDispatcher({
          store: deps.store,
          bus: deps.bus,
          logger: deps.logger,
          options: { now: deps.now, ...deps.webhooks },
        });
        await dispatcher.start();
      }
      subscription = deps.bus.consume(
        consumer,
        async (msg) => {
          try {
            await handle(msg);
          } catch (e) {
            if (e instanceof RateLimited) {
              deps.logger.debug({ retries: e.retries }, "evaluation item rate-limited by the provider; retried later");
              msg.nak(rateLimitDelayMs(e));
              return;
            }
            if (e instanceof RetryLater) {
              deps.logger.warn({ err: e.message, deliveryCount: msg.deliveryCount }, "evaluation item will be retried");
              msg.nak(backoffMs(msg.deliveryCount));
              return;
            }
            throw e;
          }
        },
        {
          concurrency: deps.concurrency,
          retryDelayMs,
          onError: (err, msg) => {
            if (!aborter.signal.aborted)
              deps.logger.error({ err, seq: msg.seq }, "evaluation item failed; redelivered");
          },
        },
      );
    },
    async stop(graceMs = 10_000) {
      if (!subscription) return;
      const timer = setTimeout(() => aborter.abort(new DomainError("unavailable", "shutting down")), graceMs);
      try {
        await Promise.all([subscription.stop(), dispatcher?.stop()]);
      } finally {
        clearTimeout(timer);
        subscription = undefined;
        dispatcher = undefined;
        await events.stop();
      }
    },
  };
}
