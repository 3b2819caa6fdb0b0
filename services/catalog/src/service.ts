import type { InternalTokens } from "@kiln/kit/auth";
import type { IdentityAuth } from "@kiln/kit/authorizer";
import type { Bus } from "@kiln/kit/bus";
import { CATALOG_GENERATION, createGeneration } from "@kiln/kit/bus/generation";
import { createEventOutbox, type EventIntentDoc } from "@kiln/kit/bus/outbox";
import { retryStartupStep } from "@kiln/kit/lifecycle";
import type { Logger } from "@kiln/kit/logger";
import { defineService, type ServiceModule } from "@kiln/kit/rpc/server";
import { afterWrites, type Store } from "@kiln/kit/store";
import { createAccess } from "./access.js";
import { createAgents } from "./agents.js";
import { createBundles } from "./bundles/index.js";
import { createImportRun, type ImportPeers } from "./bundles/run-import.js";
import type { CatalogDeps } from "./catalog-deps.js";
import { EMPTY_ALLOWLIST, type HttpAllowlist } from "./domain/tool-config.js";
import { CATALOG_STREAM, createCatalogEvents } from "./events.js";
import { createLabels } from "./labels.js";
import { LiveVersionCache } from "./live-version-cache.js";
import { createPrompts } from "./prompts.js";
import { createResolver } from "./resolve.js";
import { registerCatalogRpc } from "./rpc/catalog-rpc.js";
import { createSkills } from "./skills.js";
import { catalogCollections, ensureCatalogIndexes } from "./store/catalog-store.js";
import { createTools } from "./tools.js";

export type { ImportPeers } from "./bundles/run-import.js";
export type { HttpAllowlist } from "./domain/tool-config.js";

export interface CatalogServiceDeps {
  logger: Logger;
  store: Store;
  bus: Bus;
  tokens: InternalTokens;
  identityAuth: IdentityAuth;
  /** Hosts `http` tools may call (config `HTTP_TOOL_ALLOWED_HOSTS`); default: none, so no http tool can be saved. */
  httpAllowlist?: HttpAllowlist;
  /**
   * How long this replica reuses a prompt's or skill's live version for runs (config
   * RESOLVE_CACHE_TTL_MS): the bound on how long a publish through another replica takes to reach
   * runs resolved here; 0 turns it off. Default 1000.
   */
  resolveCacheTtlMs?: number;
  /** How often the outbox relays events the bus did not take at once; default 1000 ms. */
  outboxIntervalMs?: number;
  /**
   * The services an import calls (bundles/run-import.ts): evaluation for the cases, execution for
   * the models. Asked for on each import, so they may be built after the catalog (embedded mode).
   */
  importPeers: () => ImportPeers;
  /** How long an unfinished import is left before it is undone (bundles.ts); default 15 minutes. */
  staleImportMs?: number;
  /** The clock; tests pass a fixed one. */
  now?: () => Date;
}

/**
 * The catalog service (prompts, tools, skills and their versions), the same in both run modes:
 * main.ts serves it, the embedded mode calls it in-process.
 */
export async function createCatalogService(
  deps: CatalogServiceDeps,
): Promise<ServiceModule & { close(): Promise<void>; settle(): Promise<void> }> {
  await ensureCatalogIndexes(deps.store);
  await retryStartupStep(deps.logger, "the CATALOG stream", () => deps.bus.ensureStream(CATALOG_STREAM));
  await retryStartupStep(deps.logger, "the CATALOG_GENERATION stream", () => deps.bus.ensureStream(CATALOG_GENERATION));
  // Every write moves the change counter before the call answers: the execution service's resolve
  // cache trusts an entry only while the counter stands still (@kiln/kit/bus/generation).
  const generation = createGeneration(deps.bus, deps.logger);
  const now = deps.now ?? (() => new Date());
  const outbox = createEventOutbox(
    deps.store.collection<EventIntentDoc>("catalog_event_outbox"),
    deps.bus,
    deps.logger,
  );
  outbox.start(deps.outboxIntervalMs);
  const catalog: CatalogDeps = {
    events: createCatalogEvents(outbox),
    collections: catalogCollections(afterWrites(deps.store, generation.bump)),
    access: createAccess(deps.identityAuth),
    httpAllowlist: deps.httpAllowlist ?? EMPTY_ALLOWLIST,
    live: new LiveVersionCache({ ttlMs: deps.resolveCacheTtlMs, now }),
    now,
  };
  const prompts = createPrompts(catalog);
  const skills = createSkills(catalog);
  const agents = createAgents(catalog);
  const bundles = createBundles(catalog, { logger: deps.logger, staleAfterMs: deps.staleImportMs });
  // Imports whose caller died half-way are undone (bundles.ts); a failed sweep is tried next time.
  const sweeper = setInterval(() => {
    bundles.sweep().catch((err) => deps.logger.warn({ err }, "the import sweep failed"));
  }, 60_000);
  sweeper.unref();
  const useCases = {
    prompts,
    tools: createTools(catalog),
    skills,
    agents,
    resolver: createResolver(catalog),
    labels: createLabels(catalog, { prompts, skills, agents }),
    bundles,
    importOrganization: createImportRun(bundles, deps.importPeers, deps.logger),
  };
  const service = defineService({
    name: "catalog",
    logger: deps.logger,
    register: (router) => registerCatalogRpc(router, useCases),
    readiness: [
      { name: "store", check: () => deps.store.ping() },
      { name: "bus", check: () => deps.bus.ping() },
    ],
    auth: { tokens: deps.tokens, verifyApiKey: (key) => deps.identityAuth.verifyApiKey(key) },
  });
  return {
    ...service,
    /** Stops the outbox relay; the events of calls that finished are published (or left to a relay). */
    close: () => {
      clearInterval(sweeper);
      return outbox.stop();
    },
    settle: () => outbox.settled(),
  };
}
