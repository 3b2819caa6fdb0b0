/**
 * An organization's own audit webhook as a destination (docs/governance.md "Streaming"): owners
 * and admins set `settings.auditStream {url, secret?}`; each page of the organization's entries is
 * POSTed as `{organizationId, entries}` under the webhooks' outbound rules (every resolved address
 * checked against WEBHOOK_PRIVATE_HOSTS, the connection pinned to them, no redirect, 10 s) and, with
 * a secret, signed as Kiln's webhooks are (Standard Webhooks: `webhook-id`, `webhook-timestamp`,
 * `webhook-signature`).
 */
import type { ResolveHost } from "@kiln/kit/outbound";
import type { HostPattern } from "@kiln/kit/outbound/host-patterns";
import type { SecretBox } from "@kiln/kit/secret-box";
import { postSigned } from "@kiln/webhooks-lib/signed-post";
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
      let secrets: string[];
      try {
        secrets = stream.secret ? [options.secrets.open(stream.secret, organizationId)] : [];
      } catch (e) {
        return { ok: false, status: 0, error: `could not open the signing secret: ${(e as Error).message}` };
      }
      const response = await postSigned({
        url: stream.url,
        id,
        timestamp: Math.floor(now().getTime() / 1000),
        payload,
        secrets,
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
