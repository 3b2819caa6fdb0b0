/**
 * `POST /api/provider-connections/:id/test`: one cheap call to the provider, answered as an
 * outcome (a failing provider is `ok: false`, not an error of the call). OpenAI-protocol endpoints
 * are asked for their model list (`GET {base}/models`, no tokens spent), which also discovers the
 * connection's models; any other kind makes one model call of one output token with its first model.
 */

import { OPENAI_BASE_URL, safeExcerpt } from "@kiln/models/openai";
import { isProviderError, type ModelProvider } from "@kiln/models/provider";
import type { ProviderConnectionDoc } from "./connection-store.js";

export interface ProbeOutcome {
  ok: boolean;
  latencyMs: number;
  error?: { code: string; message: string };
  /** The model names the provider listed. */
  models?: string[];
}

const PROBE_TIMEOUT_MS = 10_000;
const MAX_LISTED = 200;
/** Models of OpenAI's list that are not chat models (embeddings, speech, images, moderation...). */
const NOT_CHAT = /embedding|tts|whisper|dall-e|moderation|davinci|babbage|image|realtime|audio|transcribe|search|sora/;

/** Whether the kind lists its models at `GET {base}/models` in OpenAI's shape. */
export const listsModels = (doc: ProviderConnectionDoc) =>
  doc.provider === "openai" || doc.provider === "openai_compatible";

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

/** The model list of an OpenAI-protocol endpoint. */
async function listModels(
  doc: ProviderConnectionDoc,
  apiKey: string | undefined,
  send: typeof fetch,
): Promise<ProbeOutcome> {
  const started = performance.now();
  const secrets = apiKey ? [apiKey] : [];
  const latencyMs = () => Math.round(performance.now() - started);
  try {
    const url = `${(doc.baseUrl || OPENAI_BASE_URL).replace(/\/+$/, "")}/models`;
    const response = await send(url, {
      method: "GET",
      headers: {
        accept: "application/json",
        "user-agent": "kiln",
        ...(apiKey && { authorization: `Bearer ${apiKey}` }),
      },
      signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
      redirect: "error",
    });
    const text = await response.text();
    if (response.status < 200 || response.status >= 300) {
      const excerpt = safeExcerpt(text, secrets);
      return {
        ok: false,
        latencyMs: latencyMs(),
        error: { code: "provider_error", message: `answered HTTP ${response.status}${excerpt ? `: ${excerpt}` : ""}` },
      };
    }
    const body = JSON.parse(text) as { data?: { id?: unknown }[] };
    const ids = (Array.isArray(body.data) ? body.data : [])
      .map((m) => m.id)
      .filter((id): id is string => typeof id === "string" && id !== "" && !/\s/.test(id))
      .filter((id) => doc.provider !== "openai" || !NOT_CHAT.test(id));
    return { ok: true, latencyMs: latencyMs(), models: ids.slice(0, MAX_LISTED) };
  } catch (error) {
    if (error instanceof SyntaxError)
      return {
        ok: false,
        latencyMs: latencyMs(),
        error: { code: "provider_error", message: "the model list could not be read" },
      };
    return { ok: false, latencyMs: latencyMs(), error: failureOf(error, secrets) };
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
  opened: { apiKey?: string; secrets: string[] },
  call: { fetch: typeof fetch; provider: () => ModelProvider },
): Promise<ProbeOutcome> {
  return listsModels(doc)
    ? listModels(doc, opened.apiKey, call.fetch)
    : callModel(doc, call.provider(), opened.secrets);
}
