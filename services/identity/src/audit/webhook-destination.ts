/**
 * An organization's own audit webhook as a destination (docs/governance.md "Streaming"): owners
 * and admins set `settings.auditStream {url, secret?}`; each page of the organization's entries is
 * POSTed as `{organizationId, entries}` under the webhooks' outbound rules (every resolved address
 * checked against WEBHOOK_PRIVATE_HOSTS, the connection pinned to them, no redirect, 10 s) and, with
 * a secret, signed as Kiln's webhooks are (Standard Webhooks: `webhook-id`, `webhook-timestamp`,
 * `webhook-signature`).
 */
import { checkedAddressesOf, OutboundFailure, type ResolveHost, sendPinnedRequest } from "@kiln/kit/outbound";
import type { HostPattern } from "@kiln/kit/outbound/host-patterns";
import type { SecretBox } from "@kiln/kit/secret-box";
import { signatureHeader } from "@kiln/webhooks-lib/signing";
import type { IdentityCollections } from "../store/identity-store.js";
import { type AuditDestination, exportedEntry, type SendOutcome } from "./audit-exporter.js";

export interface AuditWebhookOptions {
  /** Host patterns a URL may resolve to private addresses for (WEBHOOK_PRIVATE_HOSTS). */
  privateHosts: readonly HostPattern[];
  resolve: ResolveHost;
  /** Opens the sealed secrets (sealed with the organization's id as context). */
  secrets: SecretBox;
  now?: () => Date;
}

const TIMEOUT_MS = 10_000;
const MAX_RESPONSE_BYTES = 1024 * 1024;

export function webhookDestination(c: IdentityCollections, options: AuditWebhookOptions): AuditDestination {
  const now = options.now ?? (() => new Date());
  return {
    name: "webhook",
    async organizations() {
      const docs = await c.organizations.find(
        { "settings.auditStream.url": { $exists: true } },
        { projection: { _id: 1 }, limit: 1_000_000 },
      );
      return docs.map((d) => d._id);
    },
    async send(organizationId, entries): Promise<SendOutcome> {
      const organization = await c.organizations.findOne({ _id: organizationId });
      const stream = organization?.settings?.auditStream;
      if (!stream) return { ok: false, status: 0, error: "the organization's audit stream was removed" };
      const first = entries[0];
      const last = entries[entries.length - 1];
      const id = `audit_${organizationId}_${first?.sequence ?? 0}_${last?.sequence ?? 0}`;
      const payload = JSON.stringify({ organizationId, entries: entries.map(exportedEntry) });
      const body = Buffer.from(payload, "utf8");
      const timestamp = Math.floor(now().getTime() / 1000);
      const deadline = AbortSignal.timeout(TIMEOUT_MS);
      try {
        const url = new URL(stream.url);
        const addresses = await checkedAddressesOf(url, {
          privateHosts: options.privateHosts,
          resolve: options.resolve,
          signal: deadline,
          who: "webhooks",
        });
        const secret = stream.secret ? options.secrets.open(stream.secret, organizationId) : "";
        const response = await sendPinnedRequest({
          url,
          method: "POST",
          headers: {
            "content-type": "application/json",
            "content-length": body.length,
            "user-agent": "kiln-audit/1",
            "webhook-id": id,
            "webhook-timestamp": String(timestamp),
            ...(secret && { "webhook-signature": signatureHeader([secret], id, timestamp, payload) }),
            host: url.host,
          },
          body,
          addresses,
          maxResponseBytes: MAX_RESPONSE_BYTES,
          signal: deadline,
        });
        const code = response.status;
        if (code >= 200 && code < 300) return { ok: true };
        return { ok: false, status: code, error: `HTTP ${code}` };
      } catch (e) {
        const error = deadline.aborted
          ? `no response within ${TIMEOUT_MS} ms`
          : e instanceof OutboundFailure
            ? e.message
            : `could not call the endpoint: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`;
        return { ok: false, status: 0, error };
      }
    },
  };
}
