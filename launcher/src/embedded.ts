import { createClient } from "@connectrpc/connect";
import { createCatalogService, type ImportPeers } from "@kiln/catalog";
import { createEvaluationService, type ReviewOptions } from "@kiln/evaluation";
import { createExecutionService } from "@kiln/execution";
import { loadProvidersConfig, loadToolsConfig, type OtlpExportConfig, type ToolsConfig } from "@kiln/execution/config";
import type { ModelRoutesConfig } from "@kiln/execution/model-routes-config";
import { buildGateway } from "@kiln/gateway";
import { createGatewayDeps } from "@kiln/gateway/deps";
import { type AuditStreamOptions, createIdentityService } from "@kiln/identity";
import { createInternalTokens } from "@kiln/kit/auth";
import { createRemoteIdentityAuth } from "@kiln/kit/authorizer";
import { createMemoryBus } from "@kiln/kit/bus/memory";
import type { Logger } from "@kiln/kit/logger";
import { resolveWithDns } from "@kiln/kit/outbound";
import type { HostPattern } from "@kiln/kit/outbound/host-patterns";
import { createForwardInterceptor } from "@kiln/kit/rpc/auth-interceptor";
import { combineServices } from "@kiln/kit/rpc/combined";
import { buildRpcServer, type RpcServer } from "@kiln/kit/rpc/server";
import { createDirectTransport } from "@kiln/kit/rpc/transport";
import { createSecretBox } from "@kiln/kit/secret-box";
import type { ProviderRegistryOptions, ProvidersConfig } from "@kiln/models/registry";
import { CatalogService } from "@kiln/proto/catalog";
import { EvaluationService } from "@kiln/proto/evaluation";
import { ExecutionService } from "@kiln/proto/execution";
import { IdentityService } from "@kiln/proto/identity";
import { TraceService } from "@kiln/proto/traces";
import type { WebhookOptions } from "@kiln/webhooks-lib";
import { type EmbeddedData, IN_MEMORY, openEmbeddedData } from "./data-dir.js";

export interface EmbeddedOptions {
  logger: Logger;
  /** Every stored run recorded as a trace too (RUN_TRACES, on by default); false turns it off. */
  runTraces?: boolean;
  /** With runTraces: the run spans also go to this OTLP endpoint (loadTraceExportConfig). */
  traceExport?: OtlpExportConfig;
  /** TRACE_INGEST_SHARE / TRACE_INGEST_IDLE_SHARE: the process's time OTLP ingestion may hold (ingest-limiter.ts). */
  traceIngestShare?: number;
  /** MAX_ASYNC_AGENT_RUNS: asynchronous agent runs at once in the process. */
  maxAsyncAgentRuns?: number;
  /** ROUTE_BREAKER_FAILURES, ROUTE_BREAKER_OPEN_MS, ROUTE_CACHE_TTL_MS (docs/providers.md "Routes"). */
  modelRoutes?: Partial<ModelRoutesConfig>;
  traceIngestIdleShare?: number;
  /** Model providers; default: local/echo only (loadProvidersConfig({})). */
  providers?: ProvidersConfig;
  /** Tests swap providers (a fake OpenAI) here. */
  providerOptions?: ProviderRegistryOptions;
  /** Hosts http tools may call (parsed: loadToolsConfig), and the tool loop bound; default: no host. */
  tools?: ToolsConfig;
  tokenIssuer?: string;
  accessTokenTtlSeconds?: number;
  /** The Free plan's runs a month for new organizations (FREE_PLAN_MONTHLY_RUN_LIMIT); default 1,000, 0 for none. */
  freePlanMonthlyRunLimit?: number;
  apiKeyCacheTtlMs?: number;
  /** Default 6000; 0 turns rate limiting off. */
  rateLimitPerMinute?: number;
  /** An external OIDC issuer whose access tokens are accepted besides the built-in issuer's. */
  oidc?: { issuer: string; audience: string; jwksUrl: string };
  /** Where the stores and the platform's secrets live (openEmbeddedData); default in memory. Closed by close(). */
  data?: EmbeddedData;
  /** The built console served at / (docs/console.md); default: none (the API only). */
  consoleDir?: string;
  /** Origins browsers may call from (CORS_ORIGINS); default: none, CORS off. */
  corsOrigins?: string[];
  /** Provider connections' private hosts (PROVIDER_PRIVATE_HOSTS); default: public addresses only. Keys are sealed with the data directory's key. */
  connections?: { privateHosts: readonly HostPattern[] };
  /** Webhook delivery (WEBHOOK_PRIVATE_HOSTS and the like); default: public addresses only. */
  webhooks?: Partial<WebhookOptions>;
  /** How long an online evaluation score is kept (ONLINE_SCORE_RETENTION_DAYS); default 90 days. */
  onlineScoreRetentionMs?: number;
  /** Human review's lease and rule settings (docs/review.md). */
  review?: ReviewOptions;
  /** Signs and checks the internal tokens (INTERNAL_AUTH_SECRET); default: the data directory's own secret. */
  internalSecret?: string;
  /** Where the audit log is streamed (AUDIT_OTLP_LOGS_ENDPOINT…, docs/governance.md "Streaming"); default: the organizations' own webhooks under `webhooks`' address policy. */
  auditStream?: AuditStreamOptions;
}

/** How long calls in flight on the RPC port get to finish when the platform closes. */
const RPC_GRACE_MS = 5_000;

/**
 * The embedded mode (docs/architecture.md "Two run modes, one code path"): every service and the gateway in one
 * process on the stores of `data` (SQLite in a data directory, docs/store.md, or in memory), an in-process bus and
 * direct calls between services through the same interceptors as the distributed mode. Nothing is
 * listening yet: the caller listens with the gateway's app and, for internal callers, `listenRpc`.
 */
export async function buildEmbedded(options: EmbeddedOptions) {
  const { logger } = options;
  const data = options.data ?? (await openEmbeddedData(IN_MEMORY));
  const { stores } = data;
  const tokens = createInternalTokens(options.internalSecret ?? data.internalSecret);
  // The in-process bus starts empty on every start: the services recover what a previous process
  // left in flight from their stores (run events from the outbox, evaluation work, agent runs,
  // idempotency keys): `soleProcess`.
  const bus = createMemoryBus();
  const as = (id: string) => [createForwardInterceptor(tokens, { type: "service", id })];

  const identityService = await createIdentityService({
    logger: logger.child({ service: "identity" }),
    store: stores.identity,
    tokens,
    issuer: {
      issuer: options.tokenIssuer ?? "kiln",
      audience: "kiln-api",
      ttlSeconds: options.accessTokenTtlSeconds ?? 3_600,
      privateKeyPem: data.signingKeyPem,
    },
    freePlanMonthlyRunLimit: options.freePlanMonthlyRunLimit,
    // The organizations' audit webhooks follow the webhooks' address policy; their secrets are sealed with the data directory's key.
    auditStream: {
      webhook: {
        privateHosts: options.webhooks?.privateHosts ?? [],
        resolve: options.webhooks?.resolve ?? resolveWithDns,
        secrets: createSecretBox(data.secretKeys),
      },
      ...options.auditStream,
    },
  });
  // What the other services use to reach identity, each acting as itself.
  const identityFor = (id: string) => {
    const client = createClient(IdentityService, createDirectTransport(identityService, as(id)));
    return createRemoteIdentityAuth(client, { ttlMs: options.apiKeyCacheTtlMs });
  };
  const serviceDeps = (name: string) => ({
    logger: logger.child({ service: name }),
    bus,
    tokens,
    identityAuth: identityFor(name),
  });
  // One parsed allowlist for both: the catalog checks a tool at save with what execution checks at call.
  const tools = options.tools ?? loadToolsConfig({});
  // An import calls evaluation and execution (catalog bundles/run-import.ts), which are built
  // after the catalog: it asks for them on each import.
  let importPeers: ImportPeers | undefined;
  const catalogService = await createCatalogService({
    ...serviceDeps("catalog"),
    store: stores.catalog,
    httpAllowlist: tools.allowlist,
    importPeers: () => {
      if (!importPeers) throw new Error("an import before the evaluation and execution services are built");
      return importPeers;
    },
  });
  const executionService = await createExecutionService({
    ...serviceDeps("execution"),
    store: stores.execution,
    catalog: createClient(CatalogService, createDirectTransport(catalogService, as("execution"))),
    providers: options.providers ?? loadProvidersConfig({}),
    providerOptions: options.providerOptions,
    tools,
    connections: { privateHosts: [], ...options.connections, secrets: createSecretBox(data.secretKeys) },
    soleProcess: true,
    runTraces: options.runTraces,
    traceExport: options.traceExport,
    traceIngestShare: options.traceIngestShare,
    traceIngestIdleShare: options.traceIngestIdleShare,
    maxAsyncAgentRuns: options.maxAsyncAgentRuns,
    modelRoutes: options.modelRoutes,
  });
  const evaluationService = await createEvaluationService({
    ...serviceDeps("evaluation"),
    store: stores.evaluation,
    catalog: createClient(CatalogService, createDirectTransport(catalogService, as("evaluation"))),
    execution: createClient(ExecutionService, createDirectTransport(executionService, as("evaluation"))),
    traces: createClient(TraceService, createDirectTransport(executionService, as("evaluation"))),
    review: options.review,
    // Webhook signing secrets are sealed with the data directory's key (docs/operations.md "Secret key").
    webhooks: { secrets: createSecretBox(data.secretKeys), ...options.webhooks },
    onlineScoreRetentionMs: options.onlineScoreRetentionMs,
    soleProcess: true,
  });
  importPeers = {
    evaluation: createClient(EvaluationService, createDirectTransport(evaluationService, as("catalog"))),
    execution: createClient(ExecutionService, createDirectTransport(executionService, as("catalog"))),
  };

  const gateway = await buildGateway(
    createGatewayDeps({
      logger: logger.child({ service: "gateway" }),
      transports: {
        identity: createDirectTransport(identityService, as("gateway")),
        catalog: createDirectTransport(catalogService, as("gateway")),
        execution: createDirectTransport(executionService, as("gateway")),
        evaluation: createDirectTransport(evaluationService, as("gateway")),
      },
      builtinIssuer: true,
      oidc: options.oidc,
      apiKeyCacheTtlMs: options.apiKeyCacheTtlMs ?? 5_000,
      rateLimitPerMinute: options.rateLimitPerMinute ?? 6_000,
      consoleDir: options.consoleDir,
      corsOrigins: options.corsOrigins,
      bus,
    }),
  );

  const services = {
    identity: identityService,
    catalog: catalogService,
    execution: executionService,
    evaluation: evaluationService,
  };
  let rpc: RpcServer | undefined;
  return {
    gateway,
    services,
    /**
     * Serves every service's RPC on one h2c port (Connect, gRPC and gRPC-Web, gRPC health and
     * reflection), each call behind its service's own interceptors, as the distributed mode serves
     * each service on its own port (docs/operations.md "Calling the services directly"). Resolves to
     * the address it listens on.
     */
    async listenRpc(at: { host: string; port: number }): Promise<string> {
      rpc ??= await buildRpcServer(combineServices("kiln", logger.child({ service: "rpc" }), Object.values(services)));
      return rpc.app.listen(at);
    },
    async close() {
      gateway.startDraining();
      await Promise.all([gateway.app.close(), rpc?.drainAndClose(RPC_GRACE_MS)]);
      await evaluationService.close();
      await executionService.close();
      await catalogService.close();
      await identityService.close();
      await bus.close();
      await data.close();
    },
  };
}
