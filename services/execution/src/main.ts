import { runServiceProcess } from "@kiln/kit/rpc/run-service";
import { CatalogService } from "@kiln/proto/catalog";
import { loadConfig } from "./config.js";
import { loadModelRoutesConfig } from "./model-routes/route-config.js";
import { createExecutionService } from "./service.js";

const config = loadConfig();
await runServiceProcess("execution", config, ({ identity, peer, ...deps }) =>
  createExecutionService({
    ...deps,
    identityAuth: identity.auth,
    // Calls to the catalog carry the caller's principal (or act as the execution service).
    catalog: peer(CatalogService, config.CATALOG_URL),
    providers: config.providers,
    tools: config.tools,
    runTraces: config.RUN_TRACES === "on",
    traceExport: config.traceExport,
    traceIngestShare: config.TRACE_INGEST_SHARE,
    traceIngestIdleShare: config.TRACE_INGEST_IDLE_SHARE,
    maxAsyncAgentRuns: config.MAX_ASYNC_AGENT_RUNS,
    modelRoutes: loadModelRoutesConfig(),
    // FerretDB or MongoDB: the time ingestion waits on it is not this process's.
    storeElsewhere: true,
  }),
);
