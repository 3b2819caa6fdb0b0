/**
 * One delivery attempt: POST the stored payload, signed, to the webhook's URL under the http
 * tools' SSRF rules (every resolved address checked, the connection pinned to them, no redirect,
 * one deadline of at most 10 s, the response ignored beyond its status and Retry-After).
 */
import { checkedAddressesOf, OutboundFailure, type ResolveHost, sendPinnedRequest } from "@kiln/kit/outbound";
import type { HostPattern } from "@kiln/kit/outbound/host-patterns";
import type { SecretBox } from "@kiln/kit/secret-box";
import { signatureHeader } from "./signing.js";
import type { AttemptDoc, DeliveryDoc, WebhookDoc } from "./store.js";

export const MAX_TIMEOUT_MS = 10_000;
// Read and dropped: a receiver answering a large body is still a success by its status.
const MAX_RESPONSE_BYTES = 1024 * 1024;

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
  const timestamp = Math.floor(at.getTime() / 1000);
  const body = Buffer.from(delivery.payload, "utf8");
  const deadline = AbortSignal.timeout(Math.min(options.timeoutMs, MAX_TIMEOUT_MS));
  const done = (status: AttemptDoc["status"], responseCode: number, error: string): AttemptDoc => ({
    at,
    status,
    responseCode,
    durationMs: Math.round(performance.now() - started),
    error,
  });
  try {
    const url = new URL(webhook.url);
    const addresses = await checkedAddressesOf(url, {
      privateHosts: options.privateHosts,
      resolve: options.resolve,
      signal: deadline,
      who: "webhooks",
    });
    const response = await sendPinnedRequest({
      url,
      method: "POST",
      headers: {
        "content-type": "application/json",
        "content-length": body.length,
        "user-agent": "kiln-webhooks/1",
        "webhook-id": delivery._id,
        "webhook-timestamp": String(timestamp),
        "webhook-signature": signatureHeader(
          signingSecrets(webhook, at, options.secrets),
          delivery._id,
          timestamp,
          delivery.payload,
        ),
        host: url.host,
      },
      body,
      addresses,
      maxResponseBytes: MAX_RESPONSE_BYTES,
      signal: deadline,
    });
    const code = response.status;
    if (code >= 200 && code < 300) return { attempt: done("succeeded", code, "") };
    const error = code >= 300 && code < 400 ? `HTTP ${code}: redirects are not followed` : `HTTP ${code}`;
    const retryAfterMs = retryAfterOf(response.headers["retry-after"], at);
    return { attempt: done("failed", code, error), ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
  } catch (e) {
    const message = deadline.aborted
      ? `no response within ${Math.min(options.timeoutMs, MAX_TIMEOUT_MS)} ms`
      : e instanceof OutboundFailure
        ? e.message
        : `could not call the endpoint: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`;
    return { attempt: done("failed", 0, message) };
  }
}
