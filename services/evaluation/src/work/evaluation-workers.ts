/**
 * The evaluation workers: every replica (and any worker-only process) consumes the EVALUATIONS
 * work queue through one shared durable consumer, so each case × target goes to one worker at a
 * time. Delivery is at least once; the result's insert on its unique `_id` makes a redelivered
 * item harmless, and the last result in completes the run.
 */
import type { Bus, BusMessage, Subscription } from "@kiln/kit/bus";
import { DomainError } from "@kiln/kit/errors";
import { retryStartupStep } from "@kiln/kit/lifecycle";
import type { Logger } from "@kiln/kit/logger";
import { isDuplicateKeyError, type Store } from "@kiln/kit/store";
import { createWebhookDispatcher, type Dispatcher, type WebhookOptions } from "@kiln/webhooks-lib";
import type { JudgeRun } from "../domain/report.js";
import { createRunCompletion, EVALUATION_EVENTS_STREAM, evaluationEventOutbox } from "../run-completion.js";
import {
  type EvaluationRunDoc,
  evaluationCollections,
  type ResultDoc,
  resultIdOf,
  updateProgress,
} from "../store/evaluation-store.js";
import { createItemExecution, type ExecutionClient, RateLimited, RetryLater } from "./item-execution.js";
import { errorResult, resultOf } from "./item-results.js";
import { createRunReads } from "./run-reads.js";
import { EVALUATIONS_STREAM, WORKERS_DURABLE, type WorkItem } from "./work-queue.js";

export type { ExecutionClient } from "./item-execution.js";

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
  webhooks: WebhookOptions | false;
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

export function createEvaluationWorkers(deps: EvaluationWorkersDeps): EvaluationWorkers {
  const c = evaluationCollections(deps.store);
  const events = evaluationEventOutbox(deps.store, deps.bus, deps.logger);
  const completion = createRunCompletion(c, events);
  let dispatcher: Dispatcher | undefined;
  const now = deps.now ?? (() => new Date());
  const retryDelayMs = deps.retryDelayMs ?? 1_000;
  const aborter = new AbortController();
  let subscription: Subscription | undefined;
  const reads = createRunReads(c);
  const executions = createItemExecution({
    store: deps.store,
    execution: deps.execution,
    signal: aborter.signal,
    caseTimeoutMs: deps.caseTimeoutMs ?? 300_000,
    maxAttempts: deps.maxAttempts ?? 5,
    maxRateLimitRetries: deps.maxRateLimitRetries ?? 20,
  });

  const backoffMs = (deliveryCount: number) => Math.min(retryDelayMs * 2 ** (deliveryCount - 1), 30_000);
  /** The provider's wait when it gave one, else exponential backoff; with ±50% jitter so retries spread out. */
  const rateLimitDelayMs = (e: RateLimited) =>
    Math.round((e.retryAfterMs ?? backoffMs(e.retries)) * (0.5 + Math.random()));

  async function handle(msg: BusMessage): Promise<void> {
    const item = msg.json<WorkItem>();
    const attempt = item.attempt ?? 0;
    const itemId = resultIdOf(item.evaluationRunId, item.caseId, item.label, attempt);
    const run = await reads.runOf(item.evaluationRunId);
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
    const rateLimited = await executions.rateLimitedRuns(msg, itemId);

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
    const kase = await reads.caseOf(run, item.caseId);
    const target = run.targets.find((t) => t.label === item.label);
    const base = { _id: itemId, evaluationRunId: run._id, caseId: item.caseId, label: item.label, attempt };
    let result: ResultDoc;
    if (!kase || !target) {
      const message = kase ? "the target is not part of this run" : "the case no longer exists";
      result = errorResult(base, { code: "not_found", message }, now());
    } else {
      const executed = await executions.execute(msg, run, kase, target, itemId, rateLimited);
      const judgeRuns: JudgeRun[] = [];
      const judge = executions.judgeFor(run, kase, judgeRuns);
      result = await resultOf(base, executed, kase, target.outputSchemaJson, judge, now);
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
