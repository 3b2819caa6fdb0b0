/**
 * A worker-only process (`kiln evaluation-worker`): consumes the EVALUATIONS work queue beside the
 * evaluation service's replicas and serves only health checks (grpc.health.v1, /healthz, /readyz
 * on PORT, for Kubernetes probes). Started and stopped as every service process is
 * (runServiceProcess): on SIGTERM readiness fails, it stops taking work, finishes the items in hand
 * within the grace period and naks the rest (they go back to the queue at once), then closes.
 */
import { createClient } from "@connectrpc/connect";
import { unauthenticated } from "@kiln/kit/errors";
import { createForwardInterceptor } from "@kiln/kit/rpc/auth-interceptor";
import { runServiceProcess } from "@kiln/kit/rpc/run-service";
import { defineService } from "@kiln/kit/rpc/server";
import { createNetworkTransport } from "@kiln/kit/rpc/transport";
import { ExecutionService } from "@kiln/proto/execution";
import { loadWorkerConfig, webhookOptionsOf } from "./config.js";
import { createEvaluationWorkers } from "./work/evaluation-workers.js";

const config = loadWorkerConfig();
// Before anything starts: a malformed KILN_SECRET_KEY stops the process here, naming the variable.
const webhookOptions = webhookOptionsOf(config);
await runServiceProcess("evaluation-worker", config, async ({ logger, store, bus, tokens }) => {
  if (!bus) throw new Error("evaluation-worker needs NATS_URL");
  const execution = createNetworkTransport({
    baseUrl: config.EXECUTION_URL,
    interceptors: [createForwardInterceptor(tokens, { type: "service", id: "evaluation" })],
    defaultTimeoutMs: 300_000,
    logger,
  });
  const workers = createEvaluationWorkers({
    bus,
    store,
    execution: createClient(ExecutionService, execution.transport),
    logger,
    concurrency: config.EVALUATION_WORKER_CONCURRENCY,
    ackWaitMs: config.EVALUATION_ACK_WAIT_MS,
    webhooks: webhookOptions,
  });
  await workers.start();
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
    close: (graceMs) => workers.stop(graceMs),
    // The execution client closes once the workers, its only users, have stopped.
    settle: async () => execution.close(),
  };
});
