import { runServiceProcess } from "@kiln/kit/rpc/run-service";
import { CatalogService } from "@kiln/proto/catalog";
import { ExecutionService } from "@kiln/proto/execution";
import { TraceService } from "@kiln/proto/traces";
import { loadConfig, reviewOptionsOf, webhookOptionsOf } from "./config.js";
import { createEvaluationService } from "./service.js";

const config = loadConfig();
// Before anything starts: a malformed KILN_SECRET_KEY stops the process here, naming the variable.
const webhookOptions = webhookOptionsOf(config);
await runServiceProcess("evaluation", config, ({ identity, peer, ...deps }) =>
  createEvaluationService({
    ...deps,
    identityAuth: identity.auth,
    // Calls to the catalog and execution act as the evaluation service itself.
    catalog: peer(CatalogService, config.CATALOG_URL),
    execution: peer(ExecutionService, config.EXECUTION_URL, { defaultTimeoutMs: 300_000 }),
    // Execution hosts the trace service: online evaluation reads generation spans there, human
    // review reads traces (docs/review.md).
    traces: peer(TraceService, config.EXECUTION_URL),
    workers: { concurrency: config.EVALUATION_WORKER_CONCURRENCY, ackWaitMs: config.EVALUATION_ACK_WAIT_MS },
    webhooks: webhookOptions,
    review: reviewOptionsOf(config),
    webhookDispatcher: config.WEBHOOK_DISPATCHER,
    onlineScoreRetentionMs: config.ONLINE_SCORE_RETENTION_DAYS * 24 * 3_600_000,
  }),
);
