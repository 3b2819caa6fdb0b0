import { createClient } from "@connectrpc/connect";
import { createForwardInterceptor } from "@kiln/kit/rpc/auth-interceptor";
import { runServiceProcess } from "@kiln/kit/rpc/run-service";
import { createNetworkTransport } from "@kiln/kit/rpc/transport";
import { CatalogService } from "@kiln/proto/catalog";
import { ExecutionService } from "@kiln/proto/execution";
import { loadConfig, webhookOptionsOf } from "./config.js";
import { createEvaluationService } from "./service.js";

const config = loadConfig();
// Before anything starts: a malformed KILN_SECRET_KEY stops the process here, naming the variable.
const webhookOptions = webhookOptionsOf(config);
await runServiceProcess("evaluation", config, async ({ logger, store, bus, tokens, identity }) => {
  if (!bus || !identity) throw new Error("evaluation needs NATS_URL and IDENTITY_URL");
  // Calls to the catalog and execution act as the evaluation service itself.
  const asEvaluation = () => [createForwardInterceptor(tokens, { type: "service", id: "evaluation" })];
  const catalog = createNetworkTransport({ baseUrl: config.CATALOG_URL, interceptors: asEvaluation(), logger });
  const execution = createNetworkTransport({
    baseUrl: config.EXECUTION_URL,
    interceptors: asEvaluation(),
    defaultTimeoutMs: 300_000,
    logger,
  });
  const service = await createEvaluationService({
    logger,
    store,
    bus,
    tokens,
    identityAuth: identity.auth,
    catalog: createClient(CatalogService, catalog.transport),
    execution: createClient(ExecutionService, execution.transport),
    workers: { concurrency: config.EVALUATION_WORKER_CONCURRENCY, ackWaitMs: config.EVALUATION_ACK_WAIT_MS },
    webhooks: webhookOptions,
    webhookDispatcher: config.WEBHOOK_DISPATCHER,
  });
  return {
    ...service,
    // The clients close only once the server has drained and the workers stopped: both use them.
    async settle() {
      catalog.close();
      execution.close();
    },
  };
});
