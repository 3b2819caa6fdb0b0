/** The ProviderConnectionService handlers: proto ⇄ the connections' use cases (connections/connections.ts). */
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ConnectRouter } from "@connectrpc/connect";
import { answeringOne, answeringPage, withPrincipal } from "@kiln/kit/principal";
import type { ConnectionSettings } from "@kiln/models/factories";
import {
  type ConnectionModel,
  ProviderConnectionService,
  type ConnectionSettings as SettingsProto,
} from "@kiln/proto/connections";
import type { ConnectionModelInput } from "../connections/connection-rules.js";
import type { ProviderConnectionDoc } from "../connections/connection-store.js";
import type { Connections } from "../connections/connections.js";

const orUndefined = <T>(v: T | null): T | undefined => (v === null ? undefined : v);

/** Never a key: the hint of one. */
export const connectionToProto = (d: ProviderConnectionDoc) => ({
  id: d._id,
  organizationId: d.organizationId,
  name: d.name,
  provider: d.provider,
  baseUrl: d.baseUrl,
  apiKeyHint: d.apiKeyHint,
  hasSecretAccessKey: d.secretAccessKey !== null,
  settings: {
    developerRole: d.settings.developerRole,
    maxTokensParam: d.settings.maxTokensParam ?? "",
    apiVersion: d.settings.apiVersion ?? "",
    deployments: d.settings.deployments ?? {},
    region: d.settings.region ?? "",
    accessKeyId: d.settings.accessKeyId ?? "",
  },
  models: d.models.map((m) => ({
    model: m.model,
    inputPerMtokUsd: orUndefined(m.inputPerMTokUsd),
    outputPerMtokUsd: orUndefined(m.outputPerMTokUsd),
    cachedInputPerMtokUsd: orUndefined(m.cachedInputPerMTokUsd),
    cacheWritePerMtokUsd: orUndefined(m.cacheWritePerMTokUsd),
    reasoningPerMtokUsd: orUndefined(m.reasoningPerMTokUsd),
    capabilities: m.capabilities,
    api: m.api,
    tokensPerMinute: m.tokensPerMinute ?? undefined,
  })),
  createdAt: timestampFromDate(d.createdAt),
  updatedAt: timestampFromDate(d.updatedAt),
});

const modelFromProto = (m: ConnectionModel): ConnectionModelInput => ({
  model: m.model,
  inputPerMTokUsd: m.inputPerMtokUsd,
  outputPerMTokUsd: m.outputPerMtokUsd,
  cachedInputPerMTokUsd: m.cachedInputPerMtokUsd,
  cacheWritePerMTokUsd: m.cacheWritePerMtokUsd,
  reasoningPerMTokUsd: m.reasoningPerMtokUsd,
  ...(m.api !== undefined && { api: m.api }),
  tokensPerMinute: m.tokensPerMinute,
  ...(m.capabilities && {
    capabilities: {
      tools: m.capabilities.tools,
      jsonSchema: m.capabilities.jsonSchema,
      input: m.capabilities.input.length > 0 ? m.capabilities.input : undefined,
    },
  }),
});

/** Only what was set: empty strings and an empty map are "not given". */
function settingsFromProto(s: SettingsProto | undefined, secretAccessKey: string | undefined): ConnectionSettings {
  const settings: ConnectionSettings = {};
  if (s?.developerRole !== undefined) settings.developerRole = s.developerRole;
  if (s?.maxTokensParam) settings.maxTokensParam = s.maxTokensParam as ConnectionSettings["maxTokensParam"];
  if (s?.apiVersion) settings.apiVersion = s.apiVersion;
  if (s && Object.keys(s.deployments).length > 0) settings.deployments = { ...s.deployments };
  if (s?.region) settings.region = s.region;
  if (s?.accessKeyId) settings.accessKeyId = s.accessKeyId;
  if (secretAccessKey) settings.secretAccessKey = secretAccessKey;
  return settings;
}

const one = answeringOne("connection", connectionToProto);

export function registerConnectionRpc(router: ConnectRouter, connections: Connections): void {
  router.service(ProviderConnectionService, {
    createProviderConnection: one((p, req) =>
      connections.create(p, {
        organizationId: req.organizationId,
        name: req.name,
        provider: req.provider,
        apiKey: req.apiKey || undefined,
        baseUrl: req.baseUrl || undefined,
        models: req.setModels ? req.models.map(modelFromProto) : undefined,
        settings: settingsFromProto(req.settings, req.secretAccessKey),
      }),
    ),
    getProviderConnection: one((p, req) => connections.get(p, req.id)),
    listProviderConnections: answeringPage("connections", connectionToProto)((p, req) => connections.list(p, req)),
    updateProviderConnection: one((p, req) =>
      connections.update(p, {
        id: req.id,
        apiKey: req.apiKey,
        baseUrl: req.baseUrl,
        models: req.setModels ? req.models.map(modelFromProto) : undefined,
        settings:
          req.settings || req.secretAccessKey !== undefined
            ? settingsFromProto(req.settings, req.secretAccessKey)
            : undefined,
      }),
    ),
    deleteProviderConnection: one((p, req) => connections.delete(p, req.id)),
    testProviderConnection: withPrincipal(async (p, req) => {
      const r = await connections.test(p, req.id);
      return { ok: r.ok, latencyMs: BigInt(r.latencyMs), error: r.error, models: r.models ?? [] };
    }),
  });
}
