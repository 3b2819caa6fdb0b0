import { BusEnv, parseEnv, serviceEnv, Type } from "@kiln/kit/config";
import {
  HostAllowlistEnv,
  HttpToolPrivateHostsEnv,
  hostAllowlistOf,
  hostPatternsOf,
} from "@kiln/kit/outbound/host-config";
import type { HostAllowlist, HostPattern } from "@kiln/kit/outbound/host-patterns";
import type { Static } from "typebox";
import { CompatibleModelSchema } from "./compatible-model-schema.js";
import { ConnectionsEnv, loadConnectionsConfig } from "./connections/connection-config.js";
import {
  ModelConcurrencySchema,
  ModelTokensPerMinuteSchema,
  parseModelMap,
  problemsByPath,
} from "./model-map-config.js";
import { loadTraceExportConfig } from "./traces/otlp-export-config.js";

export { loadTraceExportConfig } from "./traces/otlp-export-config.js";
export type { OtlpExportConfig } from "./traces/otlp-exporter.js";

import type { CompatibleProviderConfig, ProvidersConfig } from "@kiln/models/registry";
import {
  configuredRemoteProviders,
  isHttpUrl,
  REMOTE_PROVIDER_IDS,
  RemoteProvidersEnv,
  remoteProvidersOf,
} from "./remote-providers-env.js";
import type { ResolveHost } from "./tools/http-tool.js";

/** The variables of the model providers (also read by the embedded launcher through loadProvidersConfig). */
export const ProvidersEnv = {
  ...RemoteProvidersEnv,
  /** JSON: OpenAI-compatible endpoints and their models (CompatibleProvidersSchema). */
  OPENAI_COMPATIBLE_PROVIDERS: Type.Optional(Type.String({ minLength: 1 })),
  DEFAULT_MODEL: Type.String({ pattern: "^[^/\\s]+/\\S+$", default: "local/echo" }),
  /** Deadline of one provider call, retries and their waits included. */
  PROVIDER_TIMEOUT_MS: Type.Integer({ minimum: 1, maximum: 600_000, default: 60_000 }),
  /** Retries after the first attempt on 408/409/429/5xx and connection failures. */
  PROVIDER_MAX_RETRIES: Type.Integer({ minimum: 0, maximum: 10, default: 2 }),
  /**
   * JSON: calls at once per model in this process, by "<provider>/<model>" or "<provider>/*"
   * (ModelConcurrencySchema), e.g. `{"openai/gpt-4o": 8, "ollama/*": 2}`; others have no cap.
   */
  MODEL_CONCURRENCY: Type.Optional(Type.String({ minLength: 1 })),
  /**
   * JSON: tokens a minute per deployment model, every organization's runs on it together, by
   * "<provider>/<model>" or "<provider>/*" (each of the provider's models), e.g.
   * `{"openai/gpt-4o": 400000}`; a compatible model's own `tokensPerMinute` wins (docs/usage.md).
   */
  MODEL_TOKENS_PER_MINUTE: Type.Optional(Type.String({ minLength: 1 })),
};

/** The variables of tool calls (also read by the embedded launcher through loadToolsConfig). */
export const ToolsEnv = {
  /** HTTP_TOOL_ALLOWED_HOSTS(_BY_ORG): the catalog reads the same variables with the same loader. */
  ...HostAllowlistEnv,
  /** Allowed hosts that may also resolve to private, loopback or link-local addresses (same patterns). */
  ...HttpToolPrivateHostsEnv,
  /** Model turns that may call tools in one prompt execution before it fails. */
  MAX_TOOL_ROUNDS: Type.Integer({ minimum: 1, maximum: 50, default: 8 }),
};

export interface ToolsConfig {
  /** Parsed by kit's one loader; the embedded launcher hands this same value to the catalog. */
  allowlist: HostAllowlist;
  allowPrivateFor: readonly HostPattern[];
  maxToolRounds: number;
  /** Name resolution of http tools, default `dns.lookup`; tests point names at a local server. */
  resolve?: ResolveHost;
}

/** Throws naming the variable and the entry at fault (kit/outbound/host-config). */
export function loadToolsConfig(env: Record<string, string | undefined> = process.env): ToolsConfig {
  const vars = parseEnv(Type.Object(ToolsEnv), env);
  return {
    allowlist: hostAllowlistOf(vars),
    allowPrivateFor: hostPatternsOf("HTTP_TOOL_PRIVATE_HOSTS", vars.HTTP_TOOL_PRIVATE_HOSTS),
    maxToolRounds: vars.MAX_TOOL_ROUNDS,
  };
}

/**
 * RUN_TRACES (on by default) records every stored run as a trace (docs/observability.md "Kiln's
 * runs as traces"); off turns it off. A run in a trace of its own costs one summary write, in the
 * background (docs/benchmarks.md).
 */
export const RunTracesEnv = {
  RUN_TRACES: Type.Union([Type.Literal("on"), Type.Literal("off")], { default: "on" }),
  /**
   * The share of the execution process's time OTLP ingestion may hold while runs are being stored,
   * and while none are (docs/observability.md "Scale").
   */
  TRACE_INGEST_SHARE: Type.Number({ minimum: 0.01, maximum: 1, default: 0.05 }),
  TRACE_INGEST_IDLE_SHARE: Type.Number({ minimum: 0.01, maximum: 1, default: 0.5 }),
};

/** Limits of the run path in one execution process (also read by the embedded launcher): asynchronous agent runs at once. */
export const RunLimitsEnv = {
  MAX_ASYNC_AGENT_RUNS: Type.Integer({ minimum: 1, maximum: 100_000, default: 256 }),
};

export const ExecutionEnv = Type.Object({
  ...serviceEnv({ port: 7003, database: "kiln_execution" }),
  ...BusEnv,
  IDENTITY_URL: Type.String({ minLength: 1 }),
  CATALOG_URL: Type.String({ minLength: 1 }),
  ...ProvidersEnv,
  ...ToolsEnv,
  ...RunTracesEnv,
  ...RunLimitsEnv,
  ...ConnectionsEnv,
});

/**
 * OPENAI_COMPATIBLE_PROVIDERS, e.g.
 * `[{"id":"ollama","baseUrl":"http://127.0.0.1:11434/v1","developerRole":false,
 *    "models":[{"model":"llama3.1","inputPerMTokUsd":0,"outputPerMTokUsd":0,"tools":true,"jsonSchema":true,"images":false}]}]`.
 * `apiKey` holds the key, or `apiKeyEnv` names the variable that does (a provider whose variable
 * is unset is listed but unavailable); neither = a keyless endpoint. A model without a price has
 * null pricing; capabilities default to false (CompatibleModelSchema).
 */
export const CompatibleProvidersSchema = Type.Array(
  Type.Object(
    {
      id: Type.String({ pattern: "^[a-z0-9][a-z0-9_-]{0,31}$" }),
      baseUrl: Type.String({ minLength: 1 }),
      apiKey: Type.Optional(Type.String({ minLength: 1 })),
      apiKeyEnv: Type.Optional(Type.String({ pattern: "^[A-Za-z_][A-Za-z0-9_]*$" })),
      developerRole: Type.Optional(Type.Boolean()),
      maxTokensParam: Type.Optional(Type.Union([Type.Literal("max_completion_tokens"), Type.Literal("max_tokens")])),
      models: Type.Array(CompatibleModelSchema, { minItems: 1 }),
    },
    { additionalProperties: false },
  ),
);

const RESERVED_PROVIDER_IDS = new Set(["local", ...REMOTE_PROVIDER_IDS]);

/** The only reader of the environment in the execution service. */
export function loadConfig(env: Record<string, string | undefined> = process.env) {
  const config = parseEnv(ExecutionEnv, env);
  return {
    ...config,
    providers: loadProvidersConfig(env),
    tools: loadToolsConfig(env),
    connections: loadConnectionsConfig(env),
    traceExport: loadTraceExportConfig(env),
  };
}

export type ExecutionConfig = ReturnType<typeof loadConfig>;

/**
 * The provider variables alone, for createProviderRegistry. Throws one error listing every problem, with paths into
 * OPENAI_COMPATIBLE_PROVIDERS ("…[0].models[1].model must be string"); values, keys included, never appear in it.
 */
export function loadProvidersConfig(env: Record<string, string | undefined> = process.env): ProvidersConfig {
  const vars = parseEnv(Type.Object(ProvidersEnv), env);
  const problems: string[] = [];
  const remote = remoteProvidersOf(vars, problems);
  const compatible = parseCompatibleProviders(vars.OPENAI_COMPATIBLE_PROVIDERS, env, problems);
  const concurrency = parseModelMap("MODEL_CONCURRENCY", vars.MODEL_CONCURRENCY, ModelConcurrencySchema, problems);
  const tokensPerMinute = parseModelMap(
    "MODEL_TOKENS_PER_MINUTE",
    vars.MODEL_TOKENS_PER_MINUTE,
    ModelTokensPerMinuteSchema,
    problems,
  );
  if (problems.length > 0) throw new Error(`invalid configuration: ${problems.join("; ")}`);
  return {
    ...remote,
    compatible,
    defaultModel: vars.DEFAULT_MODEL,
    timeoutMs: vars.PROVIDER_TIMEOUT_MS,
    maxRetries: vars.PROVIDER_MAX_RETRIES,
    concurrency,
    tokensPerMinute,
  };
}

/** Providers with credentials in this deployment, e.g. ["openai", "ollama"] ("local" always has). */
export function configuredProviders(config: { providers: ProvidersConfig }): string[] {
  const { compatible } = config.providers;
  return [
    ...configuredRemoteProviders(config.providers),
    ...compatible.filter((p) => !p.requiresApiKey || p.apiKey).map((p) => p.id),
  ];
}

function parseCompatibleProviders(
  text: string | undefined,
  env: Record<string, string | undefined>,
  problems: string[],
): CompatibleProviderConfig[] {
  const name = "OPENAI_COMPATIBLE_PROVIDERS";
  if (text === undefined) return [];
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    problems.push(`${name} is not valid JSON`);
    return [];
  }
  const schemaProblems = schemaProblemsOf(value, name);
  if (schemaProblems.length > 0) {
    problems.push(...schemaProblems);
    return [];
  }
  const entries = value as Static<typeof CompatibleProvidersSchema>;
  const seen = new Set<string>();
  return entries.map((p, i) => {
    const at = `${name}[${i}]`;
    if (RESERVED_PROVIDER_IDS.has(p.id)) problems.push(`${at}.id "${p.id}" is reserved`);
    else if (seen.has(p.id)) problems.push(`${at}.id "${p.id}" is listed twice`);
    seen.add(p.id);
    if (!isHttpUrl(p.baseUrl)) problems.push(`${at}.baseUrl must be an http(s) URL`);
    if (p.apiKey !== undefined && p.apiKeyEnv !== undefined) problems.push(`${at} has both apiKey and apiKeyEnv`);
    const models = new Set<string>();
    p.models.forEach((m, j) => {
      if (models.has(m.model)) problems.push(`${at}.models[${j}].model "${m.model}" is listed twice`);
      models.add(m.model);
    });
    const apiKey = p.apiKey ?? (p.apiKeyEnv === undefined ? undefined : env[p.apiKeyEnv] || undefined);
    return {
      id: p.id,
      baseUrl: p.baseUrl,
      apiKey,
      requiresApiKey: p.apiKey !== undefined || p.apiKeyEnv !== undefined,
      developerRole: p.developerRole,
      maxTokensParam: p.maxTokensParam,
      models: p.models,
    };
  });
}

/**
 * One line per bad place, by path; never the value (it may be a key). Each provider is checked on
 * its own, as typebox reports at most 8 errors per check.
 */
function schemaProblemsOf(value: unknown, name: string): string[] {
  if (!Array.isArray(value)) return [`${name} must be array`];
  return value.flatMap((entry, i) => problemsByPath(CompatibleProvidersSchema.items, entry, `${name}[${i}]`));
}
