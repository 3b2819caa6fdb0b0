/**
 * A worker-only process (`kiln evaluation-worker`): consumes the EVALUATIONS work queue beside the
 * evaluation service's replicas and serves only health checks (grpc.health.v1, /healthz, /readyz
 * on PORT, for Kubernetes probes). SIGTERM: readiness fails, it stops taking work, finishes the
 * items in hand within the grace period and naks the rest (they go back to the queue at once),
 * then closes.
 */
import { createClient } from "@connectrpc/connect";
import { createInternalTokens } from "@kiln/kit/auth";
import { createNatsBus } from "@kiln/kit/bus/nats";
import { unauthenticated } from "@kiln/kit/errors";
import { exitOnSignal, guardUncaughtExceptions } from "@kiln/kit/lifecycle";
import { createLogger } from "@kiln/kit/logger";
import { createForwardInterceptor } from "@kiln/kit/rpc/auth-interceptor";
import { CLOSE_RESERVE_MS } from "@kiln/kit/rpc/run-service";
import { buildRpcServer, defineService } from "@kiln/kit/rpc/server";
import { createNetworkTransport } from "@kiln/kit/rpc/transport";
import { createMongoStore } from "@kiln/kit/store/mongo";
import { ExecutionService } from "@kiln/proto/execution";
import { loadWorkerConfig } from "./config.js";
import { createEvaluationWorkers } from "./work/evaluation-workers.js";

const config = loadWorkerConfig();
const logger = createLogger({ name: "evaluation-worker", level: config.LOG_LEVEL });
guardUncaughtExceptions(logger);
const tokens = createInternalTokens(config.INTERNAL_AUTH_SECRET);
const store = createMongoStore({
  url: config.MONGODB_URL,
  database: config.MONGODB_DATABASE,
  appName: "kiln-evaluation-worker",
});
const bus = await createNatsBus({
  url: config.NATS_URL,
  name: "kiln-evaluation-worker",
  prefix: config.NATS_PREFIX,
  streamReplicas: config.NATS_STREAM_REPLICAS,
});
const execution = createNetworkTransport({
  baseUrl: config.EXECUTION_URL,
  interceptors: [createForwardInterceptor(tokens, { type: "service", id: "evaluation" })],
  defaultTimeoutMs: 300_000,
});
const workers = createEvaluationWorkers({
  bus,
  store,
  execution: createClient(ExecutionService, execution.transport),
  logger,
  concurrency: config.EVALUATION_WORKER_CONCURRENCY,
  ackWaitMs: config.EVALUATION_ACK_WAIT_MS,
});
// Health only: no RPC of its own, so nothing but the public health check gets past authentication.
const health = await buildRpcServer(
  defineService({
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
);
await workers.start();
const address = await health.app.listen({ host: config.HOST, port: config.PORT });
logger.info({ concurrency: config.EVALUATION_WORKER_CONCURRENCY, address }, "evaluation workers started");
exitOnSignal(logger, config.SHUTDOWN_GRACE_MS, async () => {
  const workMs = Math.max(0, config.SHUTDOWN_GRACE_MS - CLOSE_RESERVE_MS);
  await Promise.all([health.drainAndClose(0), workers.stop(workMs)]);
  execution.close();
  await bus.close();
  await store.close();
});
