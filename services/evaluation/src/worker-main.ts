/**
 * A worker-only process (`kiln evaluation-worker`): consumes the EVALUATIONS work queue beside the
 * evaluation service's replicas and serves only health checks (grpc.health.v1, /healthz, /readyz
 * on PORT, for Kubernetes probes). Started and stopped as every service process is
 * (runServiceProcess): on SIGTERM readiness fails, it stops taking work, finishes the items in hand
 * within the grace period and naks the rest (they go back to the queue at once), then closes.
 */
import { unauthenticated } from "@kiln/kit/errors";
import { runServiceProcess } from "@kiln/kit/rpc/run-service";
import { defineService } from "@kiln/kit/rpc/server";
import { ExecutionService } from "@kiln/proto/execution";
import { TraceService } from "@kiln/proto/traces";
import { loadWorkerConfig, webhookOptionsOf } from "./config.js";
import { createOnlineScorers } from "./online/online-module.js";
import { createEvaluationWorkers } from "./work/evaluation-workers.js";

const config = loadWorkerConfig();
// Before anything starts: a malformed KILN_SECRET_KEY stops the process here, naming the variable.
const webhookOptions = webhookOptionsOf(config);
await runServiceProcess("evaluation-worker", config, async ({ logger, store, bus, tokens, peer }) => {
  if (!bus) throw new Error("evaluation-worker needs NATS_URL");
  const execution = peer(ExecutionService, config.EXECUTION_URL, { as: "evaluation", defaultTimeoutMs: 300_000 });
  const workers = createEvaluationWorkers({
    bus,
    store,
    execution,
    logger,
    concurrency: config.EVALUATION_WORKER_CONCURRENCY,
    ackWaitMs: config.EVALUATION_ACK_WAIT_MS,
    webhooks: webhookOptions,
  });
  await workers.start();
  // Online evaluation's scoring jobs too (docs/observability.md "Online evaluation").
  const scorers = createOnlineScorers({
    bus,
    store,
    logger,
    execution,
    traces: peer(TraceService, config.EXECUTION_URL, { as: "evaluation" }),
    concurrency: config.EVALUATION_WORKER_CONCURRENCY,
    ackWaitMs: config.EVALUATION_ACK_WAIT_MS,
  });
  await scorers.start();
  logger.info({ concurrency: config.EVALUATION_WORKER_CONCURRENCY }, "evaluation workers started");
  return {
    // Health only: no RPC of its own, so nothing but the public health check gets past authentication.
    ...defineService({
      name: "evaluation-worker",
      logger,
      register: () => {},
      readiness: [
        { name: "store", check: () => store.ping() },
        { name: "bus", check: () => bus.ping() },
      ],
      auth: {
        tokens,
        verifyApiKey: async () => {
          throw unauthenticated("the evaluation worker serves no RPC");
        },
      },
    }),
    // The execution client (a peer) closes after this, once the workers, its only users, have stopped.
    close: async (graceMs) => {
      await workers.stop(graceMs);
      await scorers.stop(graceMs);
    },
  };
});
