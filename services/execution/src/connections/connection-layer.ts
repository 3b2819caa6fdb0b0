/**
 * The registry's layer per organization (provider-registry.ts `organizations`): an
 * organization's connections as models and providers. What was read is kept while the
 * connections' change counter has not moved (a generation on the bus, bumped after every write,
 * as the catalog's is) and at most `ttlMs`; a change made through another replica is seen by the
 * next call after the bus delivers the move, and within about a second when a move is missed
 * (watchGeneration's trust window). Providers are built once per connection revision.
 */

import type { Generation } from "@kiln/kit/bus/generation";
import { failedPrecondition } from "@kiln/kit/errors";
import type { SecretBox } from "@kiln/kit/secret-box";
import type { Collection } from "@kiln/kit/store";
import { providerOfConnection } from "@kiln/models/factories";
import type { ModelProvider } from "@kiln/models/provider";
import { type ConnectionModel, modelApisOf, type OrganizationModels } from "@kiln/models/registry";
import { MAX_CONNECTIONS_PER_ORGANIZATION } from "./connection-rules.js";
import { type ProviderConnectionDoc, secretContext } from "./connection-store.js";

export interface ConnectionLayerDeps {
  collection: Collection<ProviderConnectionDoc>;
  /** Opens the sealed keys; none: only keyless connections can be called. */
  secrets: SecretBox | undefined;
  generation: Generation;
  /** The fetch under the outbound policy (connection-fetch.ts). */
  fetch: typeof fetch;
  timeoutMs: number;
  maxRetries: number;
  /** Longest an organization's connections are reused without a read; default 30 s. */
  ttlMs?: number;
}

const MAX_CACHED_ORGANIZATIONS = 10_000;

/** The models a connection adds, "<name>/<model>". */
export function connectionModelsOf(doc: ProviderConnectionDoc): ConnectionModel[] {
  return doc.models.map((m) => ({
    id: `${doc.name}/${m.model}`,
    provider: doc.name,
    model: m.model,
    available: true,
    connectionId: doc._id,
    capabilities: { ...m.capabilities, input: [...m.capabilities.input] },
    pricing: {
      inputPerMTokUsd: m.inputPerMTokUsd,
      outputPerMTokUsd: m.outputPerMTokUsd,
      cachedInputPerMTokUsd: m.cachedInputPerMTokUsd,
      cacheWritePerMTokUsd: m.cacheWritePerMTokUsd,
      reasoningPerMTokUsd: m.reasoningPerMTokUsd,
    },
    // Counted per connection: limits/token-limits.ts names the window by connectionId.
    ...(m.tokensPerMinute != null && { tokensPerMinute: m.tokensPerMinute }),
  }));
}

export function createConnectionLayer(deps: ConnectionLayerDeps) {
  const ttlMs = deps.ttlMs ?? 30_000;
  const byOrganization = new Map<string, { generation: number; readAtMs: number; value: OrganizationModels }>();
  const providers = new Map<string, { revision: number; provider: ModelProvider }>();

  function open(doc: ProviderConnectionDoc, field: "apiKey" | "secretAccessKey"): string | undefined {
    const sealed = doc[field];
    if (sealed === null) return undefined;
    if (!deps.secrets)
      throw failedPrecondition("this deployment has no KILN_SECRET_KEY to open the connection's key with");
    return deps.secrets.open(sealed, secretContext(doc._id, field));
  }

  /** The connection's provider, built on first use of this revision; failed_precondition for a kind this build cannot call. */
  function providerFor(doc: ProviderConnectionDoc): ModelProvider {
    const revision = doc.updatedAt.getTime();
    const known = providers.get(doc._id);
    if (known?.revision === revision) return known.provider;
    const secretAccessKey = open(doc, "secretAccessKey");
    const provider = providerOfConnection(doc.provider, {
      id: doc.name,
      apiKey: open(doc, "apiKey"),
      ...(doc.baseUrl !== "" && { baseUrl: doc.baseUrl }),
      timeoutMs: deps.timeoutMs,
      maxRetries: deps.maxRetries,
      fetch: deps.fetch,
      settings: { ...doc.settings, ...(secretAccessKey !== undefined && { secretAccessKey }) },
      modelApis: modelApisOf(doc.models),
    });
    providers.set(doc._id, { revision, provider });
    return provider;
  }

  function modelsOf(docs: ProviderConnectionDoc[]): OrganizationModels {
    const byName = new Map(docs.map((d) => [d.name, d]));
    return {
      models: docs.flatMap(connectionModelsOf),
      providerOf(name) {
        const doc = byName.get(name);
        if (!doc) throw failedPrecondition(`provider connection "${name}" is gone`);
        return providerFor(doc);
      },
    };
  }

  const read = (organizationId: string) =>
    deps.collection.find({ organizationId }, { sort: { _id: 1 }, limit: MAX_CONNECTIONS_PER_ORGANIZATION });

  return {
    providerFor,
    /** The organization's connection models and providers, from the cache while the counter holds. */
    async organizationModels(organizationId: string): Promise<OrganizationModels> {
      const generation = await deps.generation.current().catch(() => undefined);
      const cached = byOrganization.get(organizationId);
      if (cached && generation === cached.generation && Date.now() - cached.readAtMs < ttlMs) return cached.value;
      const readAtMs = Date.now();
      const docs = await read(organizationId);
      // Connections of this organization that went: their providers (and keys) are let go.
      const live = new Set(docs.map((d) => d._id));
      for (const m of cached ? cached.value.models : [])
        if (!live.has(m.connectionId)) providers.delete(m.connectionId);
      const value = modelsOf(docs);
      // Without a counter (the bus is down) nothing is kept: every call reads the store.
      if (generation !== undefined) {
        byOrganization.delete(organizationId);
        if (byOrganization.size >= MAX_CACHED_ORGANIZATIONS) {
          const oldest = byOrganization.keys().next().value;
          if (oldest !== undefined) byOrganization.delete(oldest);
        }
        byOrganization.set(organizationId, { generation, readAtMs, value });
      }
      return value;
    },
    /** After a write: this process forgets the organization's connections at once, every replica once the counter moves. */
    async changed(organizationId: string): Promise<void> {
      byOrganization.delete(organizationId);
      await deps.generation.bump();
    },
  };
}

export type ConnectionLayer = ReturnType<typeof createConnectionLayer>;
