/**
 * Where the audit log is streamed (docs/configuration.md, docs/governance.md "Streaming"): for the
 * whole installation `AUDIT_OTLP_LOGS_ENDPOINT`, an OTLP/HTTP logs endpoint used as it is
 * (`http://collector:4318/v1/logs`), and `AUDIT_OTLP_HEADERS` (`key=value,key2=value2`, values
 * URL-encoded, never logged); and to each organization's own webhook, whose signing secrets
 * `KILN_SECRET_KEY` seals and whose URLs follow the webhooks' address policy
 * (`WEBHOOK_PRIVATE_HOSTS`). Checked at start; nothing is streamed without an endpoint, and no
 * organization can set a webhook without a key.
 */
import { parseEnv, Type } from "@kiln/kit/config";
import { otlpHeadersOf, otlpUrlOf } from "@kiln/kit/otlp-config";
import { resolveWithDns } from "@kiln/kit/outbound";
import { hostPatternsOf, WebhookPrivateHostsEnv } from "@kiln/kit/outbound/host-config";
import { createSecretBox, parseSecretKeys } from "@kiln/kit/secret-box";
import type { AuditOtlpConfig } from "./otlp-destination.js";
import type { AuditWebhookOptions } from "./webhook-destination.js";

/** One request's deadline. */
const TIMEOUT_MS = 10_000;

/** The OTLP destination's configuration, undefined without an endpoint; throws listing every problem. */
export function loadAuditOtlpConfig(
  env: Record<string, string | undefined> = process.env,
): AuditOtlpConfig | undefined {
  const problems: string[] = [];
  const endpoint = env.AUDIT_OTLP_LOGS_ENDPOINT?.trim();
  const url = endpoint ? otlpUrlOf("AUDIT_OTLP_LOGS_ENDPOINT", endpoint, problems) : undefined;
  const headers = otlpHeadersOf("AUDIT_OTLP_HEADERS", env.AUDIT_OTLP_HEADERS ?? "", problems);
  if (problems.length > 0) throw new Error(`invalid configuration: ${problems.join("; ")}`);
  return url ? { url: url.href, headers, timeoutMs: TIMEOUT_MS } : undefined;
}

export const AuditWebhookEnv = {
  ...WebhookPrivateHostsEnv,
  /** Seals the organizations' audit webhook secrets at rest (docs/operations.md "Secret key"); unset: none can be set. */
  KILN_SECRET_KEY: Type.String({ default: "" }),
  KILN_SECRET_KEY_PREVIOUS: Type.String({ default: "" }),
};

/** The organizations' webhooks, undefined without KILN_SECRET_KEY; throws naming the variable at fault, never a key. */
export function loadAuditWebhookConfig(
  env: Record<string, string | undefined> = process.env,
): AuditWebhookOptions | undefined {
  const vars = parseEnv(Type.Object(AuditWebhookEnv), env);
  const privateHosts = hostPatternsOf("WEBHOOK_PRIVATE_HOSTS", vars.WEBHOOK_PRIVATE_HOSTS);
  if (vars.KILN_SECRET_KEY === "") return undefined;
  const secrets = createSecretBox(parseSecretKeys(vars.KILN_SECRET_KEY, vars.KILN_SECRET_KEY_PREVIOUS));
  return { privateHosts, resolve: resolveWithDns, secrets };
}
