/**
 * A signed POST of a JSON payload to a receiver's URL under the webhooks' outbound rules (every
 * resolved address checked against the private-host patterns, the connection pinned to them, no
 * redirect, one deadline), signed as Standard Webhooks are (`webhook-id`, `webhook-timestamp`,
 * `webhook-signature`). Webhook deliveries and the audit log's webhook stream both send through it.
 */
import type { IncomingHttpHeaders } from "node:http";
import { checkedAddressesOf, OutboundFailure, type ResolveHost, sendPinnedRequest } from "@kiln/kit/outbound";
import type { HostPattern } from "@kiln/kit/outbound/host-patterns";
import { signatureHeader } from "./signing.js";

// Read and dropped: a receiver answering a large body is still a success by its status.
const MAX_RESPONSE_BYTES = 1024 * 1024;

export interface SignedPost {
  url: string;
  /** The message's id (`webhook-id`), the same on every retry of it. */
  id: string;
  /** Unix seconds (`webhook-timestamp`). */
  timestamp: number;
  payload: string;
  /** The secrets that sign it (one signature each); none: sent unsigned. */
  secrets: readonly string[];
  userAgent: string;
  privateHosts: readonly HostPattern[];
  resolve: ResolveHost;
  timeoutMs: number;
}

/** The receiver's answer (its status and headers), or why there was none (status 0). */
export type SignedPostResult = { status: number; headers: IncomingHttpHeaders } | { status: 0; error: string };

export async function postSigned(post: SignedPost): Promise<SignedPostResult> {
  const body = Buffer.from(post.payload, "utf8");
  const deadline = AbortSignal.timeout(post.timeoutMs);
  try {
    const url = new URL(post.url);
    const addresses = await checkedAddressesOf(url, {
      privateHosts: post.privateHosts,
      resolve: post.resolve,
      signal: deadline,
      who: "webhooks",
    });
    const response = await sendPinnedRequest({
      url,
      method: "POST",
      headers: {
        "content-type": "application/json",
        "content-length": body.length,
        "user-agent": post.userAgent,
        "webhook-id": post.id,
        "webhook-timestamp": String(post.timestamp),
        ...(post.secrets.length > 0 && {
          "webhook-signature": signatureHeader(post.secrets, post.id, post.timestamp, post.payload),
        }),
        host: url.host,
      },
      body,
      addresses,
      maxResponseBytes: MAX_RESPONSE_BYTES,
      signal: deadline,
    });
    return { status: response.status, headers: response.headers };
  } catch (e) {
    const error = deadline.aborted
      ? `no response within ${post.timeoutMs} ms`
      : e instanceof OutboundFailure
        ? e.message
        : `could not call the endpoint: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`;
    return { status: 0, error };
  }
}
