import type { Client } from "@connectrpc/connect";
import type { InternalTokens } from "@kiln/kit/auth";
import type { IdentityAuth } from "@kiln/kit/authorizer";
import type { Bus } from "@kiln/kit/bus";
import { CATALOG_GENERATION, createGeneration, watchGeneration } from "@kiln/kit/bus/generation";
import type { Logger } from "@kiln/kit/logger";
import { startIdempotencySweeper } from "@kiln/kit/rpc/idempotency";
import { defineService, type ServiceModule } from "@kiln/kit/rpc/server";
import type { Store } from "@kiln/kit/store";
import { createProviderRegistry, type ProviderRegistryOptions, type ProvidersConfig } from "@kiln/models/registry";
import type { CatalogService } from "@kiln/proto/catalog";
import { createBudgetParts } from "./budgets/budget-parts.js";
import { createResponseCache, startResponseCacheSweeper } from "./cache/response-cache.js";
import type { ToolsConfig } from "./config.js";
import type { ConnectionsConfig } from "./connections/connection-config.js";
import { createConnectionParts } from "./connections/connection-service.js";
import { createRunEventOutbox, RUNS_STREAM, runEventIntentCollection } from "./events/run-events.js";
import { countingRegistry } from "./limits/counting-registry.js";
import { createTokenLimits } from "./limits/token-limits.js";
import type { ModelRoutesConfig } from "./model-routes/route-config.js";
import { createModelRouteParts } from "./model-routes/route-wiring.js";
import { REMOTE_PROVIDER_IDS } from "./remote-providers-env.js";
import { registerConnectionRpc } from "./rpc/connection-rpc.js";
import { registerExecutionRpc } from "./rpc/execution-rpc.js";
import { createAgentRunner } from "./runs/agent-runner.js";
import { createCompleter } from "./runs/complete.js";
import { failOrphanedRuns } from "./runs/orphaned-runs.js";
import { readGenerationEarly, withResolveCache } from "./runs/resolve-cache.js";
import { createRunKeys, startRunKeySweeper } from "./runs/run-keys.js";
import { createRunLeases } from "./runs/run-leases.js";
import { createRunner } from "./runs/runner.js";
import { ensureRunIndexes, type RunDoc, runCollection } from "./store/run-store.js";
import { createInputValidator } from "./tools/input-validator.js";
import { createToolExecutor } from "./tools/tool-executor.js";
import { createOtlpExporter, type OtlpExportConfig } from "./traces/otlp-exporter.js";
import type { RunTraceContext } from "./traces/run-trace-context.js";
import { createRunTraceRecorder } from "./traces/run-trace-recorder.js";
import { TRACE_EVENTS_STREAM, traceEventOutbox } from "./traces/trace-events.js";
import { createTraceRetention, startTraceSweeper } from "./traces/trace-retention.js";
import { registerTraceRpc } from "./traces/trace-rpc.js";
import { ensureTraceIndexes, traceCollections } from "./traces/trace-store.js";
import { createTraces } from "./traces/traces.js";
import { createLedgerLock } from "./usage/ledger-lock.js";
import type { UsageLedger } from "./usage/usage-ledger.js";
import { createUsageParts } from "./usage/usage-parts.js";

export interface ExecutionServiceDeps {
  logger: Logger;
  store: Store;
  bus: Bus;
  tokens: InternalTokens;
  identityAuth: IdentityAuth;
  /** The catalog, called with the caller's principal to resolve the versions to run. */
  catalog: Client<typeof CatalogService>;
  providers: ProvidersConfig;
  /** Tests swap providers (a fake OpenAI) or their fetch here. */
  providerOptions?: ProviderRegistryOptions;
  tools: ToolsConfig;
  /** Provider connections: KILN_SECRET_KEY and PROVIDER_PRIVATE_HOSTS; default no key, public addresses only. */
  connections?: ConnectionsConfig;
  /** How often the outbox relays run events the bus did not take at once; default 1000 ms. */
  outboxIntervalMs?: number;
  /**
   * This process alone serves this store and this bus (the embedded mode), so what an earlier
   * process left in flight can never finish: see its uses. Never in the distributed mode, where
   * other replicas may still be working on it.
   */
  /** Asynchronous agent runs at once in this process (MAX_ASYNC_AGENT_RUNS); default 256. */
  maxAsyncAgentRuns?: number;
  soleProcess?: boolean;
  /** Every stored run recorded as a trace too (RUN_TRACES, on by default); false turns it off. */
  runTraces?: boolean;
  /** With runTraces: the run spans are also sent to this OTLP/HTTP endpoint (OTEL_EXPORTER_OTLP_*). */
  traceExport?: OtlpExportConfig;
  /** The share of this process's time OTLP ingestion may hold while runs are stored (TRACE_INGEST_SHARE, default 0.05). */
  traceIngestShare?: number;
  /** ... and while none are (TRACE_INGEST_IDLE_SHARE, default 0.5): ingest-limiter.ts. */
  traceIngestIdleShare?: number;
  /** The store is another process (the distributed mode): ingestion's bound leaves the time waiting on it out. */
  storeElsewhere?: boolean;
  /** The routes' circuit breakers and cache (docs/providers.md "Routes"); defaults when absent. */
  modelRoutes?: Partial<ModelRoutesConfig>;
  /** The usage ledger's flush timing (docs/usage.md); defaults when absent. */
  usageLedger?: { flushIntervalMs?: number; maxBatch?: number };
}

const methodPaths = (...names: string[]) => names.map((m) => `/kiln.execution.v1.ExecutionService/${m}`);
const RUN_METHODS = methodPaths("RunPrompt", "RunSkill", "RunAgent", "RerunAgentFromStep");
/** The methods that resolve through the resolve cache: the counter is read as they arrive. */
const RESOLVING_METHODS = new Set(methodPaths("RunPrompt", "RunSkill", "PreviewSkill"));

/** The execution service, the same in both run modes: main.ts serves it, the embedded mode calls it in-process. */
export async function createExecutionService(
  deps: ExecutionServiceDeps,
): Promise<
  ServiceModule & { close(graceMs?: number): Promise<void>; settle(): Promise<void>; usageLedger: UsageLedger }
> {
  await ensureRunIndexes(deps.store);
  await ensureTraceIndexes(deps.store);
  await deps.bus.ensureStream(RUNS_STREAM);
  // Idempotency records go after their 24 h (docs/operations.md "Retention").
  const idempotencySweeper = await startIdempotencySweeper({ store: deps.store, logger: deps.logger });
  await deps.bus.ensureStream(CATALOG_GENERATION);
  // Each organization's own providers (docs/providers.md "Connections"), after the deployment's.
  const connectionParts = await createConnectionParts({
    ...deps,
    config: { privateHosts: [], ...deps.connections, ...(deps.tools.resolve && { resolve: deps.tools.resolve }) },
    deploymentProviders: new Set([
      ...REMOTE_PROVIDER_IDS,
      ...deps.providers.compatible.map((p) => p.id),
      ...(deps.providerOptions?.providers ?? []).map((p) => p.id),
      ...(deps.providerOptions?.models ?? []).map((m) => m.provider),
    ]),
  });
  // Token-per-minute limits (docs/usage.md): a model with one counts each call's tokens as it answers.
  const tokenLimits = createTokenLimits();
  const models = countingRegistry(
    createProviderRegistry(deps.providers, {
      ...deps.providerOptions,
      organizations: (organizationId) => connectionParts.layer.organizationModels(organizationId),
    }),
    tokenLimits,
  );
  const modelRoutes = await createModelRouteParts({ ...deps, models, config: deps.modelRoutes });
  const runs = runCollection(deps.store);
  // Asynchronous runs an earlier process left "running" will never finish: stored as failed.
  if (deps.soleProcess) {
    const failed = await failOrphanedRuns(runs, runEventIntentCollection(deps.store), () => new Date());
    if (failed > 0)
      deps.logger.warn({ runs: failed }, "asynchronous runs left running by a previous process stored as failed");
  }
  const outbox = createRunEventOutbox(runs, runEventIntentCollection(deps.store), deps.bus, deps.logger);
  outbox.start(deps.outboxIntervalMs);
  // The usage ledger counts every stored run; the plan's limit is checked where runs start (docs/usage.md).
  // Budgets hold where runs start too, on the ledger's counts (docs/budgets.md).
  // Reads of the ledger (plan and budgets) and its flushes take turns: no run is counted twice.
  const ledgerLock = createLedgerLock();
  const budgets = await createBudgetParts({ ...deps, ledgerLock });
  const usage = await createUsageParts({
    ...deps,
    ledgerLock,
    runs,
    onCounted: (organizationId, runIds) => budgets.gate.counted(organizationId, runIds),
    organizationModels: (organizationId) => connectionParts.layer.organizationModels(organizationId),
    ledger: deps.usageLedger,
  });
  // The catalog's change counter, read from the bus only after a move is heard (pushed, not asked for on every run).
  const generation = watchGeneration(deps.bus, createGeneration(deps.bus, deps.logger));
  const traceStore = traceCollections(deps.store);
  const retention = createTraceRetention({ store: deps.store, identityAuth: deps.identityAuth });
  // Expired spans and traces go (docs/observability.md "Retention").
  const traceSweeper = await startTraceSweeper({
    store: deps.store,
    collections: traceStore,
    retention,
    logger: deps.logger,
  });
  // Unless RUN_TRACES=off: nothing is recorded (or drained on close) then.
  const runTraces =
    deps.runTraces !== false
      ? createRunTraceRecorder({
          collections: traceStore,
          models: models.catalog,
          logger: deps.logger,
          retention,
          exporter: deps.traceExport ? createOtlpExporter({ ...deps.traceExport, logger: deps.logger }) : undefined,
        })
      : undefined;
  // Expired response cache entries go (docs/cache.md "Where entries live").
  const cacheSweeper = await startResponseCacheSweeper(deps.store, deps.logger);
  // Which run each keyed call started, for the keys' 24 h (runs/run-keys.ts).
  const runKeySweeper = await startRunKeySweeper(deps.store, deps.logger);
  // The run path's activity: the ingestion bound yields more while runs are being stored.
  let runsStored = 0;
  const runnerDeps = {
    runs,
    outbox,
    allowance: usage.allowance,
    budgets: budgets.gate,
    tokenLimits,
    runKeys: createRunKeys(deps.store, runs),
    onStored: (doc: RunDoc, trace: RunTraceContext | undefined) => {
      runsStored++;
      usage.ledger.stored(doc);
      runTraces?.record(doc, trace);
    },
    catalog: withResolveCache({ catalog: deps.catalog, generation, identityAuth: deps.identityAuth }),
    identityAuth: deps.identityAuth,
    models,
    routes: { ...modelRoutes.resolver, holdBack: tokenLimits.holdBack },
    tools: createToolExecutor({
      allowlist: deps.tools.allowlist,
      allowPrivateFor: deps.tools.allowPrivateFor,
      ...(deps.tools.resolve ? { lookup: deps.tools.resolve } : {}),
    }),
    validator: createInputValidator(),
    maxToolRounds: deps.tools.maxToolRounds,
    responseCache: createResponseCache(deps.store, deps.logger),
  };
  const runner = createRunner(runnerDeps);
  const leases = createRunLeases(runs, {
    onError: (err) => deps.logger.warn({ err }, "asynchronous run leases not renewed; retrying"),
  });
  const agents = createAgentRunner({
    ...runnerDeps,
    logger: deps.logger,
    leases,
    maxAsyncRuns: deps.maxAsyncAgentRuns ?? 256,
  });
  await deps.bus.ensureStream(TRACE_EVENTS_STREAM);
  const traceEvents = traceEventOutbox(deps.store, deps.bus, deps.logger);
  traceEvents.start();
  const traces = createTraces({
    collections: traceStore,
    runs,
    identityAuth: deps.identityAuth,
    models: models.catalog,
    events: traceEvents,
    retention,
    ingest: { share: deps.traceIngestShare, idleShare: deps.traceIngestIdleShare, runsStored: () => runsStored },
    storeElsewhere: deps.storeElsewhere,
  });
  const service = defineService({
    name: "execution",
    logger: deps.logger,
    register: (router) => {
      registerExecutionRpc(
        router,
        { models, identityAuth: deps.identityAuth },
        runner,
        agents,
        createCompleter(runnerDeps),
      );
      registerConnectionRpc(router, connectionParts.connections);
      // The trace service lives in this process (docs/observability.md).
      registerTraceRpc(router, traces, retention);
      modelRoutes.register(router);
      usage.register(router);
      budgets.register(router);
    },
    readiness: [
      { name: "store", check: () => deps.store.ping() },
      { name: "bus", check: () => deps.bus.ping() },
    ],
    auth: { tokens: deps.tokens, verifyApiKey: (key) => deps.identityAuth.verifyApiKey(key) },
    idempotency: { store: deps.store, methods: new Set(RUN_METHODS), soleProcess: deps.soleProcess },
    contextValues: readGenerationEarly(generation, RESOLVING_METHODS),
  });
  return {
    ...service,
    /** Finishes the asynchronous agent runs in flight (within `graceMs` when given), then stops the outbox relay. */
    close: async (graceMs?: number) => {
      await agents.drain(graceMs);
      leases.stop();
      await outbox.stop();
      await usage.stop();
      await budgets.stop();
      await traceEvents.stop();
      await runTraces?.drain();
      await idempotencySweeper.stop();
      await traceSweeper.stop();
      await cacheSweeper.stop();
      await runKeySweeper.stop();
      await generation.stop();
      await connectionParts.stop();
    },
    /** The run events of the calls that finished after `close`, published before the store closes. */
    settle: () => outbox.settled(),
    /** The usage ledger's writer (tests flush and recover through it). */
    usageLedger: usage.ledger,
  };
}
