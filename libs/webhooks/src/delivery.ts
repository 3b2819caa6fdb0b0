/**
 * One delivery attempt: POST the stored payload, signed, to the webhook's URL under the http
 * tools' SSRF rules (every resolved address checked, the connection pinned to them, no redirect,
 * one deadline of at most 10 s, the response ignored beyond its status and Retry-After).
 */
import type { ResolveHost } from "@kiln/kit/outbound";
import type { HostPattern } from "@kiln/kit/outbound/host-patterns";
import type { SecretBox } from "@kiln/kit/secret-box";
import { postSigned } from "./signed-post.js";
import type { AttemptDoc, DeliveryDoc, WebhookDoc } from "./store.js";

export const MAX_TIMEOUT_MS = 10_000;

export interface DeliveryOptions {
  /** Host patterns that may resolve to private, loopback or link-local addresses (WEBHOOK_PRIVATE_HOSTS). */
  privateHosts: readonly HostPattern[];
  resolve: ResolveHost;
  /** At most 10 s. */
  timeoutMs: number;
  now: () => Date;
  /** Opens the signing secrets, which are stored sealed (docs/security.md "Secrets at rest and in answers"). */
  secrets: SecretBox;
}

export interface AttemptOutcome {
  attempt: AttemptDoc;
  /** From a Retry-After header (seconds or an HTTP date), in ms from now. */
  retryAfterMs?: number;
}

/** The secrets that sign now, opened: the current one, and the one before a rotation for a day after it. */
export function signingSecrets(webhook: WebhookDoc, now: Date, secrets: SecretBox): string[] {
  const previous =
    webhook.previousSecret && webhook.previousSecretUntil && webhook.previousSecretUntil > now
      ? [webhook.previousSecret]
      : [];
  return [webhook.secret, ...previous].map((s) => secrets.open(s, webhook._id));
}

function retryAfterOf(header: string | string[] | undefined, now: Date): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now.getTime());
}

export async function attemptDelivery(
  webhook: WebhookDoc,
  delivery: DeliveryDoc,
  options: DeliveryOptions,
): Promise<AttemptOutcome> {
  const at = options.now();
  const started = performance.now();
  const done = (status: AttemptDoc["status"], responseCode: number, error: string): AttemptDoc => ({
    at,
    status,
    responseCode,
    durationMs: Math.round(performance.now() - started),
    error,
  });
  let secrets: string[];
  try {
    secrets = signingSecrets(webhook, at, options.secrets);
  } catch (e) {
    return { attempt: done("failed", 0, `could not open the signing secret: ${(e as Error).message}`) };
  }
  const response = await postSigned({
    url: webhook.url,
    id: delivery._id,
    timestamp: Math.floor(at.getTime() / 1000),
    payload: delivery.payload,
    secrets,
    userAgent: "kiln-webhooks/1",
    privateHosts: options.privateHosts,
    resolve: options.resolve,
    timeoutMs: Math.min(options.timeoutMs, MAX_TIMEOUT_MS),
  });
  if ("error" in response) return { attempt: done("failed", 0, response.error) };
  const code = response.status;
  if (code >= 200 && code < 300) return { attempt: done("succeeded", code, "") };
  const error = code >= 300 && code < 400 ? `HTTP ${code}: redirects are not followed` : `HTTP ${code}`;
  const retryAfterMs = retryAfterOf(response.headers["retry-after"], at);
  return { attempt: done("failed", code, error), ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
}
