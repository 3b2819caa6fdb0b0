/**
 * An organization's own audit webhook as a destination (docs/governance.md "Streaming"): owners
 * and admins set it (`audit_streams`, audit-stream-settings.ts); each page of the organization's
 * entries is POSTed as `{organizationId, entries}` under the webhooks' outbound rules (every
 * resolved address checked against WEBHOOK_PRIVATE_HOSTS, the connection pinned to them, no
 * redirect, 10 s) and signed as Kiln's webhooks are (Standard Webhooks: `webhook-id`,
 * `webhook-timestamp`, `webhook-signature`).
 */
import type { ResolveHost } from "@kiln/kit/outbound";
import type { HostPattern } from "@kiln/kit/outbound/host-patterns";
import type { SecretBox } from "@kiln/kit/secret-box";
import type { Collection } from "@kiln/kit/store";
import { postSigned } from "@kiln/webhooks-lib/signed-post";
import { type AuditDestination, exportedEntry, type SendOutcome } from "./audit-exporter.js";
import { type AuditStreamDoc, sealContextOf, WEBHOOK_DESTINATION } from "./audit-stream-store.js";

export interface AuditWebhookOptions {
  /** Host patterns a URL may resolve to private addresses for (WEBHOOK_PRIVATE_HOSTS). */
  privateHosts: readonly HostPattern[];
  resolve: ResolveHost;
  /** Opens the sealed secrets (KILN_SECRET_KEY; the embedded data directory's key). */
  secrets: SecretBox;
  now?: () => Date;
}

const TIMEOUT_MS = 10_000;

/** The `webhook-id` of a page: the same on every retry of it, so a receiver de-duplicates by it. */
export const messageIdOf = (organizationId: string, first: number, last: number) =>
  `audit_${organizationId}_${first}_${last}`;

export function webhookDestination(
  streams: Collection<AuditStreamDoc>,
  options: AuditWebhookOptions,
): AuditDestination {
  const now = options.now ?? (() => new Date());
  return {
    name: WEBHOOK_DESTINATION,
    // Only the organizations that set a stream: a small collection, read once a pass.
    async organizations() {
      const docs = await streams.find({}, { projection: { _id: 1 }, limit: 1_000_000 });
      return docs.map((d) => d._id);
    },
    async send(organizationId, entries): Promise<SendOutcome> {
      // Read again per page: a stream removed or moved meanwhile is never sent to where it was.
      const stream = await streams.findOne({ _id: organizationId });
      if (!stream) return { ok: false, status: 0, error: "the organization's audit stream was removed" };
      let secret: string;
      try {
        secret = options.secrets.open(stream.secret, sealContextOf(organizationId));
      } catch (e) {
        return { ok: false, status: 0, error: `could not open the signing secret: ${(e as Error).message}` };
      }
      const response = await postSigned({
        url: stream.url,
        id: messageIdOf(organizationId, entries[0]?.sequence ?? 0, entries[entries.length - 1]?.sequence ?? 0),
        timestamp: Math.floor(now().getTime() / 1000),
        payload: JSON.stringify({ organizationId, entries: entries.map(exportedEntry) }),
        secrets: [secret],
        userAgent: "kiln-audit/1",
        privateHosts: options.privateHosts,
        resolve: options.resolve,
        timeoutMs: TIMEOUT_MS,
      });
      if ("error" in response) return { ok: false, status: 0, error: response.error };
      const code = response.status;
      if (code >= 200 && code < 300) return { ok: true };
      return { ok: false, status: code, error: `HTTP ${code}` };
    },
  };
}
