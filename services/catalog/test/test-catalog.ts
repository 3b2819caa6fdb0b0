/**
 * Test wiring for the catalog's use cases: an in-memory store, a fake identity (two organizations,
 * a few principals) passed through the deps, and a clock that ticks one second per call.
 * Only tests import this file.
 */
import { create } from "@bufbuild/protobuf";
import type { AuthorizeInput, IdentityAuth } from "@kiln/kit/authorizer";
import { createMemoryBus } from "@kiln/kit/bus/memory";
import { createEventOutbox, type EventIntentDoc } from "@kiln/kit/bus/outbox";
import { DomainError, notFound, permissionDenied, unauthenticated } from "@kiln/kit/errors";
import { createLogger } from "@kiln/kit/logger";
import { isOutside, type Principal } from "@kiln/kit/principal";
import type { Store } from "@kiln/kit/store";
import { createMemoryStore } from "@kiln/kit/store/memory";
import { AuthorizeResponseSchema } from "@kiln/proto/identity";
import { createAccess } from "../src/access.js";
import { createAgents } from "../src/agents.js";
import { createBundles } from "../src/bundles/index.js";
import type { CatalogDeps } from "../src/catalog-deps.js";
import { EMPTY_ALLOWLIST, type HttpAllowlist } from "../src/domain/tool-config.js";
import { CATALOG_STREAM, createCatalogEvents } from "../src/events.js";
import { createLabels } from "../src/labels.js";
import { LiveVersionCache } from "../src/live-version-cache.js";
import { createPrompts } from "../src/prompts.js";
import { createResolver } from "../src/resolve.js";
import { createSkills } from "../src/skills.js";
import { type CatalogCollections, catalogCollections, ensureCatalogIndexes } from "../src/store/catalog-store.js";
import { createTools } from "../src/tools.js";
import { VersionCache } from "../src/version-cache.js";

export const ORG_A = "org_a";
export const ORG_B = "org_b";
/** An organization whose AI entitlement is off. */
export const ORG_NO_AI = "org_noai";

const ALL_SCOPES = [
  "prompts:read",
  "prompts:write",
  "tools:read",
  "tools:write",
  "skills:read",
  "skills:write",
  "agents:read",
  "agents:write",
];

export const principals = {
  /** Member of ORG_A (and ORG_NO_AI) with the ai_platform permission. */
  userA: { type: "user", id: "usr_a" },
  /** Member of ORG_B only. */
  userB: { type: "user", id: "usr_b" },
  /** Member (role member) of ORG_A: moves no protected label. */
  userMember: { type: "user", id: "usr_member" },
  /** Member of ORG_A without the ai_platform permission. */
  userNoAiPermission: { type: "user", id: "usr_noperm" },
  keyA: { type: "api_key", id: "key_a", organizationId: ORG_A, scopes: ALL_SCOPES },
  keyAReadOnly: {
    type: "api_key",
    id: "key_ro",
    organizationId: ORG_A,
    scopes: ["prompts:read", "tools:read", "skills:read", "agents:read"],
  },
  /** A key of ORG_B with every catalog scope. */
  keyB: { type: "api_key", id: "key_b", organizationId: ORG_B, scopes: ALL_SCOPES },
  /** Keys that may run (the resolve calls) and nothing else. */
  keyARunner: { type: "api_key", id: "key_a_run", organizationId: ORG_A, scopes: ["runs:write"] },
  keyBRunner: { type: "api_key", id: "key_b_run", organizationId: ORG_B, scopes: ["runs:write"] },
  /** The execution service acting in ORG_A. */
  service: { type: "service", id: "execution", organizationId: ORG_A },
} satisfies Record<string, Principal>;

const ORGANIZATIONS: Record<string, { aiEnabled: boolean }> = {
  [ORG_A]: { aiEnabled: true },
  [ORG_B]: { aiEnabled: true },
  [ORG_NO_AI]: { aiEnabled: false },
};

const MEMBERS: Record<string, Record<string, { aiPlatform: boolean; role: "owner" | "admin" | "member" }>> = {
  usr_a: { [ORG_A]: { aiPlatform: true, role: "owner" }, [ORG_NO_AI]: { aiPlatform: true, role: "owner" } },
  usr_b: { [ORG_B]: { aiPlatform: true, role: "owner" } },
  usr_noperm: { [ORG_A]: { aiPlatform: false, role: "member" } },
  usr_member: { [ORG_A]: { aiPlatform: true, role: "member" } },
};

/** Decides as the identity service does (api.md "Organization scoping"), and records each call. */
export function createFakeIdentityAuth(): IdentityAuth & { calls: { principal: Principal; input: AuthorizeInput }[] } {
  const calls: { principal: Principal; input: AuthorizeInput }[] = [];
  return {
    calls,
    async verifyApiKey() {
      throw unauthenticated("invalid API key");
    },
    async authorize(principal, input) {
      calls.push({ principal, input });
      const organization = ORGANIZATIONS[input.organizationId];
      if (!organization) throw notFound("organization");
      let role = "";
      if (principal.type === "user") {
        const membership = MEMBERS[principal.id]?.[input.organizationId];
        role = membership?.role ?? "";
        if (!membership) throw notFound("organization");
        if (input.requireAi && !organization.aiEnabled)
          throw permissionDenied("AI is not enabled for this organization");
        if (input.requireAi && !membership.aiPlatform) throw permissionDenied("missing the ai_platform permission");
      } else if (principal.type === "api_key") {
        if (principal.organizationId !== input.organizationId) throw permissionDenied("key of another organization");
        if (input.scope && !principal.scopes.includes(input.scope))
          throw permissionDenied(`lacks the scope ${input.scope}`);
        if (input.requireAi && !organization.aiEnabled)
          throw permissionDenied("AI is not enabled for this organization");
      } else if (isOutside(principal, input.organizationId)) {
        throw permissionDenied("service token of another organization");
      } else if (input.requireAi && !organization.aiEnabled) {
        throw permissionDenied("AI is not enabled for this organization");
      }
      return create(AuthorizeResponseSchema, {
        organization: {
          id: input.organizationId,
          name: input.organizationId,
          settings: { protectedLabels: ["production"] },
        },
        role,
      });
    },
  };
}

/** A clock that starts at a fixed instant and moves one second per reading. */
export function createTickingClock(start = Date.parse("2026-01-01T00:00:00.000Z")): () => Date {
  let ms = start;
  return () => {
    ms += 1_000;
    return new Date(ms);
  };
}

export async function createTestCatalog(
  options: {
    allowlist?: HttpAllowlist;
    store?: Store;
    now?: () => Date;
    resolveCacheTtlMs?: number;
    staleImportMs?: number;
  } = {},
) {
  const store = options.store ?? createMemoryStore();
  await ensureCatalogIndexes(store);
  const identityAuth = createFakeIdentityAuth();
  const now = options.now ?? createTickingClock();
  // The in-process bus: the catalog's events go through the same outbox as in the service.
  const bus = createMemoryBus();
  await bus.ensureStream(CATALOG_STREAM);
  const outbox = createEventOutbox(
    store.collection<EventIntentDoc>("catalog_event_outbox"),
    bus,
    createLogger({ name: "test", level: "silent" }),
  );
  const deps: CatalogDeps = {
    events: createCatalogEvents(outbox),
    collections: catalogCollections(store),
    access: createAccess(identityAuth),
    httpAllowlist: options.allowlist ?? EMPTY_ALLOWLIST,
    // Off unless a test turns it on: with the ticking clock every entry would be stale anyway.
    live: new LiveVersionCache({ ttlMs: options.resolveCacheTtlMs ?? 0, now }),
    now,
  };
  const versionCache = new VersionCache();
  const prompts = createPrompts(deps);
  const skills = createSkills(deps);
  const agents = createAgents(deps);
  return {
    store,
    bus,
    outbox,
    identityAuth,
    collections: deps.collections,
    prompts,
    tools: createTools(deps),
    skills,
    agents,
    labels: createLabels(deps, { prompts, skills, agents }),
    bundles: createBundles(deps, { staleAfterMs: options.staleImportMs }),
    versionCache,
    live: deps.live,
    resolver: createResolver(deps, versionCache),
  };
}

/** Every document of every catalog collection: compare before and after a refused call. */
export async function snapshotOf(collections: CatalogCollections) {
  const entries = await Promise.all(
    Object.entries(collections).map(async ([name, collection]) => [
      name,
      await collection.find({}, { sort: { _id: 1 } }),
    ]),
  );
  return Object.fromEntries(entries) as Record<string, unknown[]>;
}

/** The domain error `p` rejects with; throws when it resolves or rejects with anything else. */
export async function rejectionOf(p: Promise<unknown>): Promise<DomainError> {
  const outcome = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (outcome === undefined) throw new Error("expected the call to fail");
  if (!(outcome instanceof DomainError)) throw outcome;
  return outcome;
}
