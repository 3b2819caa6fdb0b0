import { createClient } from "@connectrpc/connect";
import { createForwardInterceptor } from "@kiln/kit/rpc/auth-interceptor";
import { runServiceProcess } from "@kiln/kit/rpc/run-service";
import { createNetworkTransport } from "@kiln/kit/rpc/transport";
import { EvaluationService } from "@kiln/proto/evaluation";
import { ExecutionService } from "@kiln/proto/execution";
import { httpAllowlistOf, loadConfig } from "./config.js";
import { createCatalogService } from "./service.js";

const config = loadConfig();
const httpAllowlist = httpAllowlistOf(config);
await runServiceProcess("catalog", config, async ({ logger, store, bus, tokens, identity }) => {
  if (!bus || !identity) throw new Error("catalog needs NATS_URL and IDENTITY_URL");
  // An import (bundles/run-import.ts) calls evaluation and execution with the caller's principal.
  const asCatalog = () => [createForwardInterceptor(tokens, { type: "service", id: "catalog" })];
  const evaluation = createNetworkTransport({ baseUrl: config.EVALUATION_URL, interceptors: asCatalog(), logger });
  const execution = createNetworkTransport({ baseUrl: config.EXECUTION_URL, interceptors: asCatalog(), logger });
  const importPeers = {
    evaluation: createClient(EvaluationService, evaluation.transport),
    execution: createClient(ExecutionService, execution.transport),
  };
  const service = await createCatalogService({
    logger,
    store,
    bus,
    tokens,
    identityAuth: identity.auth,
    httpAllowlist,
    resolveCacheTtlMs: config.RESOLVE_CACHE_TTL_MS,
    importPeers: () => importPeers,
  });
  return {
    ...service,
    // The clients close only once the server has drained: imports still finishing need them.
    async settle() {
      await service.settle();
      evaluation.close();
      execution.close();
    },
  };
});
