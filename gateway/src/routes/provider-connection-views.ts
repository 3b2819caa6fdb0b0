/**
 * Provider connection views and bodies (docs/providers.md "Connections"): an organization's own
 * model providers. A connection never carries its key, only `apiKeyHint`.
 */
import { MAX_TOKENS_PER_MINUTE } from "@kiln/contracts/token-limits";
import { OPENAI_APIS, type OpenAIApi, PROVIDER_KINDS, type ProviderKind } from "@kiln/models/kinds";
import type { ProviderConnection } from "@kiln/proto/connections";
import Type from "typebox";
import { Nullable, OneOf, Timestamp } from "../schemas.js";
import { answersOf, iso } from "./views.js";

const Price = Type.Number({ minimum: 0, maximum: 1_000_000, description: "USD per million tokens" });
const Input = Type.Array(OneOf(["text", "image"]), { minItems: 1, maxItems: 2, uniqueItems: true });
const Api = OneOf(OPENAI_APIS, {
  description:
    "openai, openai_compatible, azure_openai: the OpenAI API the model is called through; unset: chat_completions, or responses for OpenAI's Responses-only models (openai, azure_openai)",
});
const TokensPerMinute = Type.Integer({
  minimum: 1,
  maximum: MAX_TOKENS_PER_MINUTE,
  description: "tokens a minute this connection's runs on the model may use (docs/usage.md); absent: no limit",
});

export const ConnectionModelBody = Type.Object(
  {
    model: Type.String({
      minLength: 1,
      maxLength: 200,
      description: "the provider's model name; the model id is <name>/<model>",
    }),
    inputPerMTokUsd: Type.Optional(Price),
    outputPerMTokUsd: Type.Optional(Price),
    cachedInputPerMTokUsd: Type.Optional(Price),
    cacheWritePerMTokUsd: Type.Optional(Price),
    reasoningPerMTokUsd: Type.Optional(Price),
    tokensPerMinute: Type.Optional(TokensPerMinute),
    capabilities: Type.Optional(
      Type.Object(
        {
          tools: Type.Optional(Type.Boolean()),
          jsonSchema: Type.Optional(Type.Boolean()),
          input: Type.Optional(Input),
        },
        { additionalProperties: false },
      ),
    ),
    api: Type.Optional(Api),
  },
  { additionalProperties: false },
);

const Secret = Type.String({ minLength: 1, maxLength: 4_096 });

/** The settings of the kinds that have any, flat in the body; a kind refuses another's. */
export const SettingsBody = {
  developerRole: Type.Optional(
    Type.Boolean({ description: "openai_compatible: whether the endpoint knows the developer role" }),
  ),
  maxTokensParam: Type.Optional(OneOf(["max_tokens", "max_completion_tokens"], { description: "openai_compatible" })),
  apiVersion: Type.Optional(Type.String({ minLength: 1, maxLength: 40, description: "azure_openai: the api-version" })),
  deployments: Type.Optional(
    Type.Record(Type.String({ minLength: 1, maxLength: 200 }), Type.String({ minLength: 1, maxLength: 64 }), {
      description: "azure_openai: the deployment of each model name",
    }),
  ),
  region: Type.Optional(Type.String({ minLength: 1, maxLength: 40, description: "bedrock" })),
  accessKeyId: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: "bedrock" })),
  secretAccessKey: Type.Optional({ ...Secret, description: "bedrock; a secret like apiKey: never answered" }),
};

export const CreateConnectionBody = {
  name: Type.String({ minLength: 1, maxLength: 32, description: "a lower-case slug, unique in the organization" }),
  provider: OneOf(PROVIDER_KINDS),
  apiKey: Type.Optional({ ...Secret, description: "sealed at rest, never answered" }),
  baseUrl: Type.Optional(Type.String({ minLength: 1, maxLength: 2_048 })),
  models: Type.Optional(
    Type.Array(ConnectionModelBody, {
      maxItems: 200,
      description:
        "left out: the models the provider lists (every kind but azure_openai), priced where the catalog knows them",
    }),
  ),
  ...SettingsBody,
};

export const UpdateConnectionBody = {
  apiKey: Type.Optional({ ...Secret, description: "a new key replaces the stored one" }),
  baseUrl: Type.Optional(
    Nullable(Type.String({ minLength: 1, maxLength: 2_048 }), { description: "null: the provider's public endpoint" }),
  ),
  models: Type.Optional(Type.Array(ConnectionModelBody, { maxItems: 200 })),
  ...SettingsBody,
};

const ModelView = Type.Object({
  model: Type.String(),
  id: Type.String({ description: "<connection name>/<model>" }),
  inputPerMTokUsd: Nullable(Type.Number()),
  outputPerMTokUsd: Nullable(Type.Number()),
  cachedInputPerMTokUsd: Nullable(Type.Number()),
  cacheWritePerMTokUsd: Nullable(Type.Number()),
  reasoningPerMTokUsd: Nullable(Type.Number()),
  tokensPerMinute: Nullable(Type.Integer(), { description: "null: no limit" }),
  capabilities: Type.Object({ tools: Type.Boolean(), jsonSchema: Type.Boolean(), input: Input }),
  api: Type.Optional(Api),
});

export const ProviderConnectionView = Type.Object(
  {
    id: Type.String(),
    organizationId: Type.String(),
    name: Type.String(),
    provider: OneOf(PROVIDER_KINDS),
    baseUrl: Nullable(Type.String(), { description: "null: the provider's public endpoint" }),
    apiKeyHint: Nullable(Type.String({ description: '"…abcd": the last four characters of the key' })),
    hasSecretAccessKey: Type.Boolean(),
    developerRole: Type.Optional(Type.Boolean()),
    maxTokensParam: Type.Optional(OneOf(["max_tokens", "max_completion_tokens"])),
    apiVersion: Type.Optional(Type.String()),
    deployments: Type.Optional(Type.Record(Type.String(), Type.String())),
    region: Type.Optional(Type.String()),
    accessKeyId: Type.Optional(Type.String()),
    models: Type.Array(ModelView),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: "ProviderConnection", description: "never carries a key" },
);

export const ConnectionTestView = Type.Object(
  {
    ok: Type.Boolean(),
    latencyMs: Type.Integer(),
    error: Type.Optional(Type.Object({ code: Type.String(), message: Type.String() })),
    models: Type.Optional(Type.Array(Type.String(), { description: "the model names the provider listed" })),
  },
  { $id: "ProviderConnectionTest", description: "a failing provider is ok: false, not an error" },
);

const fromExecution = answersOf("execution");
const orNull = (v: number | undefined) => v ?? null;

export const connectionView = fromExecution.view("provider connection", (c: ProviderConnection) => {
  const s = c.settings;
  return {
    id: c.id,
    organizationId: c.organizationId,
    name: c.name,
    provider: c.provider as ProviderKind,
    baseUrl: c.baseUrl || null,
    apiKeyHint: c.apiKeyHint || null,
    hasSecretAccessKey: c.hasSecretAccessKey,
    ...(s?.developerRole !== undefined && { developerRole: s.developerRole }),
    ...(s?.maxTokensParam && { maxTokensParam: s.maxTokensParam as "max_tokens" | "max_completion_tokens" }),
    ...(s?.apiVersion && { apiVersion: s.apiVersion }),
    ...(s && Object.keys(s.deployments).length > 0 && { deployments: { ...s.deployments } }),
    ...(s?.region && { region: s.region }),
    ...(s?.accessKeyId && { accessKeyId: s.accessKeyId }),
    models: c.models.map((m) => ({
      model: m.model,
      id: `${c.name}/${m.model}`,
      inputPerMTokUsd: orNull(m.inputPerMtokUsd),
      outputPerMTokUsd: orNull(m.outputPerMtokUsd),
      cachedInputPerMTokUsd: orNull(m.cachedInputPerMtokUsd),
      cacheWritePerMTokUsd: orNull(m.cacheWritePerMtokUsd),
      reasoningPerMTokUsd: orNull(m.reasoningPerMtokUsd),
      tokensPerMinute: orNull(m.tokensPerMinute),
      capabilities: {
        tools: m.capabilities?.tools ?? false,
        jsonSchema: m.capabilities?.jsonSchema ?? false,
        input: (m.capabilities?.input ?? ["text"]) as ("text" | "image")[],
      },
      ...(m.api && { api: m.api as OpenAIApi }),
    })),
    createdAt: iso(c.createdAt) ?? "",
    updatedAt: iso(c.updatedAt) ?? "",
  };
});
