/**
 * What a provider connection may be (docs/providers.md "Connections"): its name, endpoint,
 * credentials, settings and models, each problem reported by its field path. Pure: no store, no
 * network (a base URL that is an address literal is judged here; a name is resolved and checked at
 * each call).
 */
import { isIP } from "node:net";
import { tokensPerMinuteIssue } from "@kiln/contracts/token-limits";
import type { FieldIssue } from "@kiln/kit/errors";
import { classifyAddress } from "@kiln/kit/outbound";
import { type HostPattern, urlMatchesAny } from "@kiln/kit/outbound/host-patterns";
import {
  type ConnectionSettings,
  OPENAI_APIS,
  type OpenAIApi,
  PROVIDER_KINDS,
  type ProviderKind,
} from "@kiln/models/factories";
import type { ConnectionModelDoc } from "./connection-store.js";

/** Names no connection may take: they prefix Kiln's own model ids. */
export const RESERVED_NAMES = ["local", "kiln", "route"] as const;
export const NAME_PATTERN = /^[a-z0-9][a-z0-9_-]{0,31}$/;
export const MAX_MODELS = 200;
export const MAX_CONNECTIONS_PER_ORGANIZATION = 50;
const MAX_SECRET_CHARS = 4_096;
const MAX_URL_CHARS = 2_048;
const MODEL_NAME = /^[^\s/][^\s]{0,199}$/;
const REGION = /^[a-z]{2}(-[a-z]+)+-\d{1,2}$/;
const API_VERSION = /^[0-9a-zA-Z.-]{1,40}$/;

/** A model as a caller gives it: what is unset takes the kind's default. */
export interface ConnectionModelInput {
  model: string;
  inputPerMTokUsd?: number;
  outputPerMTokUsd?: number;
  cachedInputPerMTokUsd?: number;
  cacheWritePerMTokUsd?: number;
  reasoningPerMTokUsd?: number;
  capabilities?: { tools?: boolean; jsonSchema?: boolean; input?: string[] };
  /** "chat_completions" or "responses" (docs/providers.md "OpenAI's Responses API"). */
  api?: string;
  tokensPerMinute?: number;
}

/** The kinds whose APIs are the vendors' own: their models call tools and answer JSON Schemas unless told otherwise. */
const vendorKind = (kind: ProviderKind) => kind !== "openai_compatible";

/** The kinds that speak OpenAI's protocol, whose models may name the OpenAI API they are called through. */
const OPENAI_PROTOCOL: readonly ProviderKind[] = ["openai", "openai_compatible", "azure_openai"];
const isOpenAIApi = (text: string): text is OpenAIApi => (OPENAI_APIS as readonly string[]).includes(text);

/** Kinds that need an API key; openai_compatible may be keyless and bedrock signs with AWS keys. */
const needsApiKey = (kind: ProviderKind) => kind !== "openai_compatible" && kind !== "bedrock";
/** Kinds without a public endpoint: the base URL is theirs. */
const needsBaseUrl = (kind: ProviderKind) => kind === "openai_compatible" || kind === "azure_openai";

export const isProviderKind = (text: string): text is ProviderKind =>
  (PROVIDER_KINDS as readonly string[]).includes(text);

export function nameIssues(name: string, deploymentProviders: ReadonlySet<string>): FieldIssue[] {
  if (!NAME_PATTERN.test(name))
    return [{ field: "name", issue: "must be a lower-case slug: a-z, 0-9, - and _, at most 32 characters" }];
  if ((RESERVED_NAMES as readonly string[]).includes(name)) return [{ field: "name", issue: `"${name}" is reserved` }];
  if (deploymentProviders.has(name)) return [{ field: "name", issue: `"${name}" is a provider of this deployment` }];
  return [];
}

/** Syntax and, for an address literal, the outbound rules (PROVIDER_PRIVATE_HOSTS). */
export function baseUrlIssues(raw: string, privateHosts: readonly HostPattern[]): FieldIssue[] {
  const at = (issue: string) => [{ field: "baseUrl", issue }];
  if (raw.length > MAX_URL_CHARS) return at(`must be at most ${MAX_URL_CHARS} characters`);
  if (!URL.canParse(raw)) return at("must be an absolute http or https URL");
  const url = new URL(raw);
  if (url.protocol !== "https:" && url.protocol !== "http:") return at("must use http or https");
  if (url.username || url.password) return at("must not carry credentials");
  if (url.hash || url.search) return at("must not have a query or fragment");
  const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  if (isIP(host) !== 0) {
    const { scope, range } = classifyAddress(host);
    if (scope === "unroutable" || (scope === "internal" && !urlMatchesAny(privateHosts, url)))
      return at(
        `address ${host} is in the "${range}" range; connections call public addresses unless PROVIDER_PRIVATE_HOSTS allows the host`,
      );
  }
  return [];
}

export function secretIssues(field: string, value: string | undefined): FieldIssue[] {
  if (value === undefined) return [];
  if (value.trim() === "") return [{ field, issue: "must not be empty" }];
  if (value.length > MAX_SECRET_CHARS) return [{ field, issue: `must be at most ${MAX_SECRET_CHARS} characters` }];
  return [];
}

/** What the kind requires of the credentials and endpoint the connection will have. */
export function requiredIssues(
  kind: ProviderKind,
  has: { apiKey: boolean; baseUrl: boolean; secretAccessKey: boolean; settings: ConnectionSettings },
): FieldIssue[] {
  const issues: FieldIssue[] = [];
  if (needsApiKey(kind) && !has.apiKey) issues.push({ field: "apiKey", issue: `is required for provider ${kind}` });
  if (needsBaseUrl(kind) && !has.baseUrl) issues.push({ field: "baseUrl", issue: `is required for provider ${kind}` });
  if (kind === "bedrock") {
    if (!has.settings.region) issues.push({ field: "region", issue: "is required for provider bedrock" });
    if (!has.settings.accessKeyId) issues.push({ field: "accessKeyId", issue: "is required for provider bedrock" });
    if (!has.secretAccessKey) issues.push({ field: "secretAccessKey", issue: "is required for provider bedrock" });
  }
  return issues;
}

/** Settings another kind reads are refused rather than ignored. */
export function settingsIssues(kind: ProviderKind, s: ConnectionSettings): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const only = (field: keyof ConnectionSettings, kinds: ProviderKind[]) => {
    if (s[field] !== undefined && !kinds.includes(kind))
      issues.push({ field, issue: `applies to provider ${kinds.join(" or ")} only` });
  };
  only("developerRole", ["openai_compatible"]);
  only("maxTokensParam", ["openai_compatible"]);
  only("apiVersion", ["azure_openai"]);
  only("deployments", ["azure_openai"]);
  only("region", ["bedrock"]);
  only("accessKeyId", ["bedrock"]);
  only("secretAccessKey", ["bedrock"]);
  if (s.apiVersion !== undefined && !API_VERSION.test(s.apiVersion))
    issues.push({ field: "apiVersion", issue: 'must be an API version such as "2024-10-21"' });
  if (s.region !== undefined && !REGION.test(s.region))
    issues.push({ field: "region", issue: 'must be an AWS region such as "us-east-1"' });
  if (s.accessKeyId !== undefined && !/^[A-Z0-9]{16,128}$/.test(s.accessKeyId))
    issues.push({ field: "accessKeyId", issue: "must be an AWS access key id" });
  for (const [model, deployment] of Object.entries(s.deployments ?? {})) {
    if (!/^[A-Za-z0-9_.-]{1,64}$/.test(deployment))
      issues.push({ field: `deployments.${model}`, issue: "must be a deployment name: letters, digits, _, . and -" });
  }
  return issues;
}

function priceIssues(field: string, value: number | undefined): FieldIssue[] {
  if (value === undefined) return [];
  return Number.isFinite(value) && value >= 0 && value <= 1_000_000
    ? []
    : [{ field, issue: "must be a number of USD per million tokens from 0 to 1000000" }];
}

const PRICES = [
  "inputPerMTokUsd",
  "outputPerMTokUsd",
  "cachedInputPerMTokUsd",
  "cacheWritePerMTokUsd",
  "reasoningPerMTokUsd",
] as const;

function apiIssues(kind: ProviderKind, api: string | undefined, field: string): FieldIssue[] {
  if (api === undefined) return [];
  if (!OPENAI_PROTOCOL.includes(kind))
    return [{ field, issue: `applies to provider ${OPENAI_PROTOCOL.join(", ")} only` }];
  return isOpenAIApi(api) ? [] : [{ field, issue: `must be ${OPENAI_APIS.map((a) => `"${a}"`).join(" or ")}` }];
}

/** The models as stored, or the issues, by path (`models[1].model`). */
export function modelsOf(
  kind: ProviderKind,
  models: readonly ConnectionModelInput[],
): { models: ConnectionModelDoc[]; issues: FieldIssue[] } {
  const issues: FieldIssue[] = [];
  if (models.length > MAX_MODELS) issues.push({ field: "models", issue: `must hold at most ${MAX_MODELS} models` });
  const seen = new Set<string>();
  const docs = models.map((m, i): ConnectionModelDoc => {
    const at = `models[${i}]`;
    if (!MODEL_NAME.test(m.model))
      issues.push({ field: `${at}.model`, issue: "must be a model name: no spaces, not starting with /" });
    else if (seen.has(m.model)) issues.push({ field: `${at}.model`, issue: `"${m.model}" is listed twice` });
    seen.add(m.model);
    for (const p of PRICES) issues.push(...priceIssues(`${at}.${p}`, m[p]));
    const tpmIssue = m.tokensPerMinute === undefined ? undefined : tokensPerMinuteIssue(m.tokensPerMinute);
    if (tpmIssue) issues.push({ field: `${at}.tokensPerMinute`, issue: tpmIssue });
    const input = m.capabilities?.input ?? ["text"];
    input.forEach((x, j) => {
      if (x !== "text" && x !== "image")
        issues.push({ field: `${at}.capabilities.input[${j}]`, issue: 'must be "text" or "image"' });
    });
    if (!input.includes("text")) issues.push({ field: `${at}.capabilities.input`, issue: 'must include "text"' });
    issues.push(...apiIssues(kind, m.api, `${at}.api`));
    return {
      model: m.model,
      inputPerMTokUsd: m.inputPerMTokUsd ?? null,
      outputPerMTokUsd: m.outputPerMTokUsd ?? null,
      cachedInputPerMTokUsd: m.cachedInputPerMTokUsd ?? null,
      cacheWritePerMTokUsd: m.cacheWritePerMTokUsd ?? null,
      reasoningPerMTokUsd: m.reasoningPerMTokUsd ?? null,
      capabilities: {
        tools: m.capabilities?.tools ?? vendorKind(kind),
        jsonSchema: m.capabilities?.jsonSchema ?? vendorKind(kind),
        input: [...new Set(input.filter((x): x is "text" | "image" => x === "text" || x === "image"))],
      },
      ...(m.api !== undefined && isOpenAIApi(m.api) && { api: m.api }),
      ...(m.tokensPerMinute !== undefined && { tokensPerMinute: m.tokensPerMinute }),
    };
  });
  return { models: docs, issues };
}
