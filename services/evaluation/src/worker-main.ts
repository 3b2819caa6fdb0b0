/**
 * A worker-only process (`kiln evaluation-worker`): consumes the EVALUATIONS work queue beside the
 * evaluation service's replicas, serves no RPC. SIGTERM: stop taking work, finish or nak what is in
 * hand (a message not acked is delivered again), close.
 */
import { createClient } from "@connectrpc/connect";
import { createInternalTokens } from "@kiln/kit/auth";
import { createNatsBus } from "@kiln/kit/bus/nats";
import { exitOnSignal, guardUncaughtExceptions } from "@kiln/kit/lifecycle";
import { createLogger } from "@kiln/kit/logger";
import { createForwardInterceptor } from "@kiln/kit/rpc/auth-interceptor";
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
const bus = await createNatsBus({ url: config.NATS_URL, name: "kiln-evaluation-worker" });
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
await workers.start();
logger.info({ concurrency: config.EVALUATION_WORKER_CONCURRENCY }, "evaluation workers started");
exitOnSignal(logger, config.SHUTDOWN_GRACE_MS, async () => {
  await workers.stop(Math.max(0, config.SHUTDOWN_GRACE_MS - 1_000));
  execution.close();
  await bus.close();
  await store.close();
});
