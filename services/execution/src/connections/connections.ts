/**
 * Provider connections (docs/providers.md "Connections"): an organization's own model providers.
 * Members (and API keys with `connections:read`) list and read them and run their models; owners
 * and admins (API keys with `connections:write`) create, change, test and delete them. Keys are
 * sealed before they are stored and never answered: a connection shows `apiKeyHint`.
 */
import { authorizeOnResource, type IdentityAuth } from "@kiln/kit/authorizer";
import {
  alreadyExists,
  type FieldIssue,
  failedPrecondition,
  invalidArgument,
  notFound,
  permissionDenied,
} from "@kiln/kit/errors";
import { newId } from "@kiln/kit/ids";
import type { HostPattern } from "@kiln/kit/outbound/host-patterns";
import { findPage } from "@kiln/kit/pagination";
import type { Principal } from "@kiln/kit/principal";
import type { SecretBox } from "@kiln/kit/secret-box";
import { type Collection, isDuplicateKeyError } from "@kiln/kit/store";
import type { ConnectionSettings } from "@kiln/models/factories";
import { discoveredModels } from "./connection-discovery.js";
import type { ConnectionLayer } from "./connection-layer.js";
import { listsModels, type OpenedSecrets, type ProbeOutcome, probeConnection } from "./connection-probe.js";
import {
  baseUrlIssues,
  type ConnectionModelInput,
  isProviderKind,
  MAX_CONNECTIONS_PER_ORGANIZATION,
  modelsOf,
  nameIssues,
  requiredIssues,
  secretIssues,
  settingsIssues,
} from "./connection-rules.js";
import { hintOf, type ProviderConnectionDoc, secretContext } from "./connection-store.js";

export const SCOPES = { read: "connections:read", write: "connections:write" } as const;

export interface ConnectionsDeps {
  collection: Collection<ProviderConnectionDoc>;
  identityAuth: IdentityAuth;
  layer: ConnectionLayer;
  /** Seals keys (KILN_SECRET_KEY); none: connections with a key are refused. */
  secrets: SecretBox | undefined;
  /** PROVIDER_PRIVATE_HOSTS. */
  privateHosts: readonly HostPattern[];
  /** The fetch under the outbound policy, for the model lists of create and /test. */
  fetch: typeof fetch;
  /** The deployment's own provider ids (openai, the OPENAI_COMPATIBLE_PROVIDERS ids): names a connection may not take. */
  deploymentProviders: ReadonlySet<string>;
  now: () => Date;
  /** Told when a write could not move the change counter (it keeps trying). */
  onCounterError?: (err: unknown) => void;
}

export interface ConnectionCreate {
  organizationId: string;
  name: string;
  provider: string;
  apiKey?: string;
  baseUrl?: string;
  /** Undefined: discovered from the provider's model list when the kind has one. */
  models?: ConnectionModelInput[];
  settings: ConnectionSettings;
}

export interface ConnectionUpdate {
  id: string;
  apiKey?: string;
  /** "" returns to the provider's public endpoint. */
  baseUrl?: string;
  models?: ConnectionModelInput[];
  /** Merged over the stored settings; a secretAccessKey replaces the stored one. */
  settings?: ConnectionSettings;
}

const refuse = (issues: FieldIssue[]) => {
  if (issues.length > 0) throw invalidArgument("invalid provider connection", issues);
};

export function createConnections(deps: ConnectionsDeps) {
  const c = deps.collection;

  async function authorize(principal: Principal, organizationId: string, write: boolean, what: string) {
    const decision = await authorizeOnResource(deps.identityAuth, principal, {
      organizationId,
      scope: write ? SCOPES.write : SCOPES.read,
      what,
      requireAi: false,
    });
    if (write && principal.type === "user" && decision.role !== "owner" && decision.role !== "admin")
      throw permissionDenied("only organization owners and admins manage provider connections");
  }

  async function connectionFor(principal: Principal, id: string, write: boolean): Promise<ProviderConnectionDoc> {
    const doc = id === "" ? null : await c.findOne({ _id: id });
    if (!doc) throw notFound("provider connection");
    await authorize(principal, doc.organizationId, write, "provider connection");
    return doc;
  }

  function seal(id: string, field: "apiKey" | "secretAccessKey", value: string): string {
    if (!deps.secrets)
      throw failedPrecondition("this deployment has no KILN_SECRET_KEY: connections with keys cannot be stored", [
        { field, issue: "cannot be stored without KILN_SECRET_KEY" },
      ]);
    return deps.secrets.seal(value, secretContext(id, field));
  }

  const open = (doc: ProviderConnectionDoc, field: "apiKey" | "secretAccessKey") => {
    const sealed = doc[field];
    return sealed !== null && deps.secrets ? deps.secrets.open(sealed, secretContext(doc._id, field)) : undefined;
  };
  const opened = (doc: ProviderConnectionDoc): OpenedSecrets => {
    const apiKey = open(doc, "apiKey");
    const secretAccessKey = open(doc, "secretAccessKey");
    return { apiKey, secretAccessKey, secrets: [apiKey, secretAccessKey].filter((s): s is string => s !== undefined) };
  };

  const probe = (doc: ProviderConnectionDoc): Promise<ProbeOutcome> =>
    probeConnection(doc, opened(doc), { fetch: deps.fetch, provider: () => deps.layer.providerFor(doc) });

  async function changed(organizationId: string) {
    await deps.layer.changed(organizationId).catch((err) => deps.onCounterError?.(err));
  }

  return {
    async create(principal: Principal, input: ConnectionCreate): Promise<ProviderConnectionDoc> {
      if (input.organizationId === "")
        throw invalidArgument("organizationId is required", [{ field: "organizationId", issue: "is required" }]);
      if (!isProviderKind(input.provider))
        throw invalidArgument("invalid provider connection", [
          { field: "provider", issue: "must be openai, openai_compatible, azure_openai, anthropic, gemini or bedrock" },
        ]);
      const kind = input.provider;
      const { secretAccessKey, ...settings } = input.settings;
      const models = modelsOf(kind, input.models ?? []);
      refuse([
        ...nameIssues(input.name, deps.deploymentProviders),
        ...(input.baseUrl !== undefined ? baseUrlIssues(input.baseUrl, deps.privateHosts) : []),
        ...secretIssues("apiKey", input.apiKey),
        ...secretIssues("secretAccessKey", secretAccessKey),
        ...settingsIssues(kind, input.settings),
        ...requiredIssues(kind, {
          apiKey: input.apiKey !== undefined,
          baseUrl: input.baseUrl !== undefined && input.baseUrl !== "",
          secretAccessKey: secretAccessKey !== undefined,
          settings,
        }),
        ...models.issues,
      ]);
      await authorize(principal, input.organizationId, true, "organization");
      const existing = await c.countDocuments({ organizationId: input.organizationId });
      if (existing >= MAX_CONNECTIONS_PER_ORGANIZATION)
        throw failedPrecondition(
          `an organization has at most ${MAX_CONNECTIONS_PER_ORGANIZATION} provider connections`,
        );
      const id = newId("pcn");
      const at = deps.now();
      const doc: ProviderConnectionDoc = {
        _id: id,
        organizationId: input.organizationId,
        name: input.name,
        provider: kind,
        baseUrl: input.baseUrl ?? "",
        apiKey: input.apiKey !== undefined ? seal(id, "apiKey", input.apiKey) : null,
        apiKeyHint: input.apiKey !== undefined ? hintOf(input.apiKey) : "",
        secretAccessKey: secretAccessKey !== undefined ? seal(id, "secretAccessKey", secretAccessKey) : null,
        settings,
        models: models.models,
        createdAt: at,
        updatedAt: at,
      };
      // Models left out are asked of the provider; one that does not answer leaves the list empty (/test fills it).
      if (input.models === undefined && listsModels(doc)) {
        const listed = await probe(doc);
        if (listed.ok) doc.models = discoveredModels(doc, listed.listed ?? []);
      }
      if (await c.findOne({ organizationId: input.organizationId, name: input.name })) throw nameTaken(input.name);
      try {
        await c.insertOne(doc);
      } catch (e) {
        if (isDuplicateKeyError(e)) throw nameTaken(input.name);
        throw e;
      }
      await changed(doc.organizationId);
      return doc;
    },

    get: (principal: Principal, id: string) => connectionFor(principal, id, false),

    async list(principal: Principal, input: { organizationId: string; limit: number; cursor: string }) {
      if (input.organizationId === "")
        throw invalidArgument("organizationId is required", [{ field: "organizationId", issue: "is required" }]);
      await authorize(principal, input.organizationId, false, "organization");
      return findPage(c, { organizationId: input.organizationId }, input);
    },

    async update(principal: Principal, input: ConnectionUpdate): Promise<ProviderConnectionDoc> {
      const doc = await connectionFor(principal, input.id, true);
      const { secretAccessKey, ...given } = input.settings ?? {};
      const settings = { ...doc.settings, ...given };
      const models = input.models !== undefined ? modelsOf(doc.provider, input.models) : undefined;
      const baseUrl = input.baseUrl ?? doc.baseUrl;
      refuse([
        ...(input.baseUrl !== undefined && input.baseUrl !== "" ? baseUrlIssues(input.baseUrl, deps.privateHosts) : []),
        ...secretIssues("apiKey", input.apiKey),
        ...secretIssues("secretAccessKey", secretAccessKey),
        ...settingsIssues(doc.provider, { ...given, ...(secretAccessKey !== undefined && { secretAccessKey }) }),
        ...requiredIssues(doc.provider, {
          apiKey: input.apiKey !== undefined || doc.apiKey !== null,
          baseUrl: baseUrl !== "",
          secretAccessKey: secretAccessKey !== undefined || doc.secretAccessKey !== null,
          settings,
        }),
        ...(models?.issues ?? []),
      ]);
      const set: Partial<ProviderConnectionDoc> = { settings, baseUrl, updatedAt: deps.now() };
      if (input.apiKey !== undefined) {
        set.apiKey = seal(doc._id, "apiKey", input.apiKey);
        set.apiKeyHint = hintOf(input.apiKey);
      }
      if (secretAccessKey !== undefined) set.secretAccessKey = seal(doc._id, "secretAccessKey", secretAccessKey);
      if (models) set.models = models.models;
      const updated = await c.findOneAndUpdate({ _id: doc._id, organizationId: doc.organizationId }, { $set: set });
      if (!updated) throw notFound("provider connection");
      await changed(doc.organizationId);
      return updated;
    },

    async delete(principal: Principal, id: string): Promise<ProviderConnectionDoc> {
      const doc = await connectionFor(principal, id, true);
      await c.deleteOne({ _id: doc._id, organizationId: doc.organizationId });
      await changed(doc.organizationId);
      return doc;
    },

    /** One cheap call; a connection without models takes the ones its provider lists. */
    async test(principal: Principal, id: string): Promise<ProbeOutcome> {
      const doc = await connectionFor(principal, id, true);
      const outcome = await probe(doc);
      if (outcome.ok && outcome.listed && doc.models.length === 0 && outcome.listed.length > 0) {
        await c.updateOne(
          { _id: doc._id, organizationId: doc.organizationId },
          { $set: { models: discoveredModels(doc, outcome.listed), updatedAt: deps.now() } },
        );
        await changed(doc.organizationId);
      }
      const { listed: _listed, ...answered } = outcome;
      return answered;
    },
  };
}

const nameTaken = (name: string) =>
  alreadyExists(`a provider connection named "${name}" already exists in this organization`, [
    { field: "name", issue: "is taken in this organization" },
  ]);

export type Connections = ReturnType<typeof createConnections>;
