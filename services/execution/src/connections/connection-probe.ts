/**
 * `POST /api/provider-connections/:id/test`: one cheap call to the provider, answered as an
 * outcome (a failing provider is `ok: false`, not an error of the call). A kind with a model list
 * (OpenAI-protocol endpoints, Anthropic, Gemini, Bedrock: @kiln/models/model-lists) is asked for it,
 * no tokens spent, which also discovers the connection's models; `azure_openai`, whose models are
 * the operator's deployments, makes one model call of one output token with its first model.
 */

import { type ListedModel, type ModelLister, modelListerOf } from "@kiln/models/model-lists";
import { safeExcerpt } from "@kiln/models/openai";
import { isProviderError, type ModelProvider } from "@kiln/models/provider";
import type { ProviderConnectionDoc } from "./connection-store.js";

export interface ProbeOutcome {
  ok: boolean;
  latencyMs: number;
  error?: { code: string; message: string };
  /** The model names the provider listed. */
  models?: string[];
  /** What the provider listed of each (input, catalog prices): discovery's, not answered. */
  listed?: ListedModel[];
}

/** A connection's secrets, opened: what its calls and its list send. */
export interface OpenedSecrets {
  apiKey?: string;
  secretAccessKey?: string;
  secrets: string[];
}

const PROBE_TIMEOUT_MS = 10_000;

/** Whether the kind lists its models. */
export const listsModels = (doc: ProviderConnectionDoc) => modelListerOf(doc.provider) !== undefined;

function failureOf(error: unknown, secrets: string[]): { code: string; message: string } {
  if (isProviderError(error)) return { code: error.kind, message: safeExcerpt(error.message, secrets) };
  const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
  if (cause?.code === "ADDRESS_NOT_ALLOWED")
    return { code: "address_not_allowed", message: String(cause.message ?? "address not allowed") };
  if (error instanceof Error && error.name === "TimeoutError")
    return { code: "provider_timeout", message: `no answer within ${PROBE_TIMEOUT_MS} ms` };
  const detail = typeof cause?.code === "string" ? ` (${cause.code})` : "";
  return { code: "provider_error", message: `could not reach the provider${detail}` };
}

/** The connection's model list, every page within one deadline. */
async function listModels(
  doc: ProviderConnectionDoc,
  lister: ModelLister,
  opened: OpenedSecrets,
  send: typeof fetch,
): Promise<ProbeOutcome> {
  const started = performance.now();
  const latencyMs = () => Math.round(performance.now() - started);
  try {
    const listed = await lister({
      id: doc.name,
      ...(doc.baseUrl !== "" && { baseUrl: doc.baseUrl }),
      ...(opened.apiKey !== undefined && { apiKey: opened.apiKey }),
      ...(doc.settings.region !== undefined && { region: doc.settings.region }),
      ...(doc.settings.accessKeyId !== undefined && { accessKeyId: doc.settings.accessKeyId }),
      ...(opened.secretAccessKey !== undefined && { secretAccessKey: opened.secretAccessKey }),
      fetch: send,
      signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
    });
    return { ok: true, latencyMs: latencyMs(), models: listed.map((m) => m.model), listed };
  } catch (error) {
    return { ok: false, latencyMs: latencyMs(), error: failureOf(error, opened.secrets) };
  }
}

/** One call of one output token with the connection's first model. */
async function callModel(
  doc: ProviderConnectionDoc,
  provider: ModelProvider,
  secrets: string[],
): Promise<ProbeOutcome> {
  const model = doc.models[0]?.model;
  if (model === undefined)
    return { ok: false, latencyMs: 0, error: { code: "no_models", message: "the connection has no models to call" } };
  const started = performance.now();
  try {
    await provider.generate({
      model,
      messages: [{ role: "user", content: "ping" }],
      maxOutputTokens: 1,
      timeoutMs: PROBE_TIMEOUT_MS,
    });
    return { ok: true, latencyMs: Math.round(performance.now() - started) };
  } catch (error) {
    return { ok: false, latencyMs: Math.round(performance.now() - started), error: failureOf(error, secrets) };
  }
}

export function probeConnection(
  doc: ProviderConnectionDoc,
  opened: OpenedSecrets,
  call: { fetch: typeof fetch; provider: () => ModelProvider },
): Promise<ProbeOutcome> {
  const lister = modelListerOf(doc.provider);
  return lister ? listModels(doc, lister, opened, call.fetch) : callModel(doc, call.provider(), opened.secrets);
}
