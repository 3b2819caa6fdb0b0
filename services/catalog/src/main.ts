import { runServiceProcess } from "@kiln/kit/rpc/run-service";
import { EvaluationService } from "@kiln/proto/evaluation";
import { ExecutionService } from "@kiln/proto/execution";
import { httpAllowlistOf, loadConfig } from "./config.js";
import { createCatalogService } from "./service.js";

const config = loadConfig();
const httpAllowlist = httpAllowlistOf(config);
await runServiceProcess("catalog", config, ({ identity, peer, ...deps }) => {
  // An import (bundles/run-import.ts) calls evaluation and execution with the caller's principal.
  const importPeers = {
    evaluation: peer(EvaluationService, config.EVALUATION_URL),
    execution: peer(ExecutionService, config.EXECUTION_URL),
  };
  return createCatalogService({
    ...deps,
    identityAuth: identity.auth,
    httpAllowlist,
    resolveCacheTtlMs: config.RESOLVE_CACHE_TTL_MS,
    importPeers: () => importPeers,
  });
});
