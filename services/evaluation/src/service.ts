import type { InternalTokens } from "@kiln/kit/auth";
import type { IdentityAuth } from "@kiln/kit/authorizer";
import type { Bus } from "@kiln/kit/bus";
import { retryStartupStep } from "@kiln/kit/lifecycle";
import type { Logger } from "@kiln/kit/logger";
import { startIdempotencySweeper } from "@kiln/kit/rpc/idempotency";
import { defineService, type ServiceModule } from "@kiln/kit/rpc/server";
import type { Store } from "@kiln/kit/store";
import { createWebhookModule, WEBHOOK_SECRET_FIELDS, type WebhookOptions } from "@kiln/webhooks-lib";
import { type CatalogClient, createAccess } from "./access.js";
import { createCases } from "./cases.js";
import { createDatasetModule } from "./datasets/dataset-module.js";
import { rulesGeneration } from "./domain/org-cache.js";
import type { EvaluationDeps } from "./evaluation-deps.js";
import { createOnlineModule, type TraceClient } from "./online/online-module.js";
import { createPromptEvaluations } from "./prompt-evaluations.js";
import type { TargetReader } from "./review/auto-add-targets.js";
import type { RunReader, TraceReader } from "./review/item-content.js";
import type { Items } from "./review/items.js";
import type { PromptReader } from "./review/rendered-messages.js";
import { createReviewModule, type ReviewOptions } from "./review/review-module.js";
import { registerEvaluationRpc } from "./rpc/evaluation-rpc.js";
import { createRunCompletion, EVALUATION_EVENTS_STREAM, evaluationEventOutbox } from "./run-completion.js";
import { createRuns } from "./runs.js";
import { ensureEvaluationIndexes, evaluationCollections } from "./store/evaluation-store.js";
import { createEvaluationWorkers, type ExecutionClient } from "./work/evaluation-workers.js";
import { createWorkRelay, EVALUATIONS_STREAM } from "./work/work-queue.js";

export type { CatalogClient } from "./access.js";
export type { ReviewOptions } from "./review/review-module.js";
export {
  createEvaluationWorkers,
  type EvaluationWorkers,
  type EvaluationWorkersDeps,
  type ExecutionClient,
} from "./work/evaluation-workers.js";

export interface EvaluationWorkerOptions {
  /** Items handled at the same time in this process (EVALUATION_WORKER_CONCURRENCY). */
  concurrency: number;
  /** EVALUATION_ACK_WAIT_MS. */
  ackWaitMs: number;
}

export interface EvaluationServiceDeps {
  logger: Logger;
  store: Store;
  bus: Bus;
  tokens: InternalTokens;
  identityAuth: IdentityAuth;
  /** How old a pending import's cases are before the catalog is asked how it ended; default 15 minutes. */
  staleImportMs?: number;
  /** The catalog, called as the evaluation service itself (its client's forward interceptor signs as "evaluation"). */
  catalog: CatalogClient & PromptReader & TargetReader;
  /**
   * The execution service, called as the evaluation service itself: RunSkill per item, Complete per
   * llm_judge, GetRun per online score and for review.
   */
  execution: ExecutionClient & RunReader;
  /** Execution's trace service, called as the evaluation service: online scores of ingested generations, review. */
  traces: TraceReader & TraceClient;
  /** Human review's lease and rule settings. */
  review?: ReviewOptions;
  /** Workers in this process; default 4 at a time with a 30 s ack wait; `false` serves the RPCs only. */
  workers?: EvaluationWorkerOptions | false;
  /** Webhook delivery settings (the dispatcher runs with the workers); see @kiln/webhooks-lib. */
  webhooks: WebhookOptions;
  /** Run a webhook dispatcher beside the workers (WEBHOOK_DISPATCHER); default true. */
  webhookDispatcher?: boolean;
  /** How often runs whose work the bus did not take are published again; default 2000 ms. */
  relayIntervalMs?: number;
  /** How long an online score is kept after it was stored (ONLINE_SCORE_RETENTION_DAYS); default 90 days. */
  onlineScoreRetentionMs?: number;
  /** The clock; tests pass a fixed one. */
  now?: () => Date;
  /**
   * This process alone serves this store and this bus (the embedded mode), so what an earlier
   * process left in flight can never finish: see its uses. Never in the distributed mode, where
   * other replicas may still be working on it.
   */
  soleProcess?: boolean;
}

const CREATE_METHODS = [
  ...["CreateEvaluationCases", "StartEvaluationRun"].map((m) => `/kiln.evaluation.v1.EvaluationService/${m}`),
  "/kiln.webhooks.v1.WebhookService/CreateWebhook",
  "/kiln.evaluation.v1.OnlineEvaluationService/CreateOnlineRule",
  ...["CreateQueue", "AddQueueItems", "CreateCaseFromItem"].map((m) => `/kiln.evaluation.v1.ReviewService/${m}`),
  ...["CreateDataset", "AddDatasetItems", "ImportDatasetItems", "AddDatasetItemsFrom"].map(
    (m) => `/kiln.evaluation.v1.DatasetService/${m}`,
  ),
];

/**
 * The evaluation service, the same in both run modes: main.ts serves it, the embedded mode calls
 * it in-process. It runs the work relay and (unless `workers: false`) the workers; close() stops both.
 */
export async function createEvaluationService(
  deps: EvaluationServiceDeps,
): Promise<ServiceModule & { close(graceMs?: number): Promise<void>; addQueueItems: Items["addItems"] }> {
  await ensureEvaluationIndexes(deps.store);
  await deps.bus.ensureStream(EVALUATIONS_STREAM);
  await retryStartupStep(deps.logger, "the EVALUATION_EVENTS stream", () =>
    deps.bus.ensureStream(EVALUATION_EVENTS_STREAM),
  );
  // Idempotency records go after their 24 h (docs/operations.md "Retention").
  const idempotencySweeper = await startIdempotencySweeper({ store: deps.store, logger: deps.logger });
  const collections = evaluationCollections(deps.store);
  const events = evaluationEventOutbox(deps.store, deps.bus, deps.logger);
  events.start();
  const webhooks = await createWebhookModule({
    store: deps.store,
    bus: deps.bus,
    logger: deps.logger,
    identityAuth: deps.identityAuth,
    options: { now: deps.now, ...deps.webhooks },
  });
  const evaluation: EvaluationDeps = {
    collections,
    access: createAccess(deps.identityAuth, deps.catalog),
    completion: createRunCompletion(collections, events),
    bus: deps.bus,
    logger: deps.logger,
    now: deps.now ?? (() => new Date()),
  };
  const relay = createWorkRelay(collections.runs, deps.bus, deps.logger, {
    completion: evaluation.completion,
    progress: collections.progress,
  });
  // The in-process bus lost its queue with the earlier process: unfinished runs' work is published
  // again (items that have a result are only acknowledged, so the remaining cases run once).
  if (deps.soleProcess) {
    const { modifiedCount } = await collections.runs.updateMany(
      { status: { $in: ["queued", "running"] }, workPublished: true },
      { $set: { workPublished: false } },
    );
    if (modifiedCount > 0) deps.logger.info({ runs: modifiedCount }, "unfinished evaluation runs queued again");
  }
  relay.start(deps.relayIntervalMs);
  const workerOptions = deps.workers === undefined ? { concurrency: 4, ackWaitMs: 30_000 } : deps.workers;
  const workers = workerOptions
    ? createEvaluationWorkers({
        bus: deps.bus,
        store: deps.store,
        execution: deps.execution,
        logger: deps.logger,
        now: deps.now,
        webhooks: deps.webhookDispatcher === false ? false : deps.webhooks,
        ...workerOptions,
      })
    : undefined;
  await workers?.start();
  // Online evaluation (docs/observability.md "Online evaluation"): scored by the same processes.
  const rules = await rulesGeneration(deps.bus, deps.logger);
  const online = await createOnlineModule({
    rulesGeneration: rules,
    store: deps.store,
    bus: deps.bus,
    logger: deps.logger,
    access: evaluation.access,
    now: evaluation.now,
    execution: deps.execution,
    traces: deps.traces,
    workers: workerOptions,
    scoreRetentionMs: deps.onlineScoreRetentionMs,
  });
  await online.start();
  const cases = createCases(evaluation);
  // Cases of imports whose gateway died half-way are settled by the catalog's journal (docs/bundles.md).
  const importSweeper = setInterval(() => {
    cases.sweepImports(deps.staleImportMs).catch((err) => deps.logger.warn({ err }, "the import sweep failed"));
  }, 60_000);
  importSweeper.unref();
  const review = await createReviewModule({
    rulesGeneration: rules,
    store: deps.store,
    bus: deps.bus,
    logger: deps.logger,
    access: evaluation.access,
    cases,
    runs: deps.execution,
    traces: deps.traces,
    prompts: deps.catalog,
    targets: deps.catalog,
    now: evaluation.now,
    options: deps.review,
  });
  const datasets = await createDatasetModule({
    store: deps.store,
    access: evaluation.access,
    runs: deps.execution,
    now: evaluation.now,
    logger: deps.logger,
  });
  const service = defineService({
    name: "evaluation",
    logger: deps.logger,
    register: (router) => {
      const prompts = createPromptEvaluations(evaluation, datasets);
      registerEvaluationRpc(router, { cases, runs: createRuns(evaluation, datasets), prompts });
      // Datasets too: evaluations run on them (docs/datasets.md).
      datasets.register(router);
      // The webhooks service lives in this process (docs/webhooks.md "Where it runs").
      webhooks.register(router);
      online.register(router);
      // Human review lives here too: it owns its queues and makes evaluation cases (docs/review.md).
      review.register(router);
    },
    readiness: [
      { name: "store", check: () => deps.store.ping() },
      { name: "bus", check: () => deps.bus.ping() },
    ],
    auth: { tokens: deps.tokens, verifyApiKey: (key) => deps.identityAuth.verifyApiKey(key) },
    idempotency: {
      store: deps.store,
      methods: new Set(CREATE_METHODS),
      soleProcess: deps.soleProcess,
      // A replayed create never answers the webhook's secret again (docs/webhooks.md).
      secretFields: WEBHOOK_SECRET_FIELDS,
    },
  });
  return {
    ...service,
    /** Adds runs and traces to an annotation queue (docs/review.md "Adding by rule"), in process. */
    addQueueItems: review.addItems,
    /** Stops the relay and the workers: items in hand get `graceMs` (default 10 s), then go back to the queue. */
    async close(graceMs?: number) {
      clearInterval(importSweeper);
      await review.close();
      await relay.stop();
      await workers?.stop(graceMs);
      await online.close(graceMs);
      await events.stop();
      await webhooks.close();
      await idempotencySweeper.stop();
    },
  };
}
