import type { InternalTokens } from "@kiln/kit/auth";
import { jsonText } from "@kiln/kit/json-text";
import type { Logger } from "@kiln/kit/logger";
import { startIdempotencySweeper } from "@kiln/kit/rpc/idempotency";
import { defineService, type ServiceModule } from "@kiln/kit/rpc/server";
import type { Store } from "@kiln/kit/store";
import { startSweeper } from "@kiln/kit/sweeper";
import { createAuditLog } from "./audit/audit-log.js";
import { auditEntries, ensureAuditIndexes } from "./audit/audit-store.js";
import { type AuditStreamOptions, startAuditStream } from "./audit/audit-stream.js";
import { auditStreams } from "./audit/audit-stream-store.js";
import { exportCursors } from "./audit/export-cursors.js";
import { createTokenIssuer, type TokenIssuerOptions } from "./domain/token-issuer.js";
import { createIdentity } from "./identity.js";
import { registerAuditRpc } from "./rpc/audit-rpc.js";
import { registerIdentityRpc } from "./rpc/identity-rpc.js";
import { registerSamlRpc } from "./rpc/saml-rpc.js";
import { registerScimRpc } from "./rpc/scim-rpc.js";
import { ensureIdentityIndexes, identityCollections } from "./store/identity-store.js";
import { createAccess } from "./use-cases/access.js";
import { auditStreamSettingsUseCases, resealAuditStreamSecrets } from "./use-cases/audit-stream-settings.js";

export type { AuditStreamOptions } from "./audit/audit-stream.js";

export interface IdentityServiceDeps {
  logger: Logger;
  store: Store;
  tokens: InternalTokens;
  issuer: TokenIssuerOptions;
  /** The Free plan's monthly run limit for new organizations; default 1,000, 0 for none. */
  freePlanMonthlyRunLimit?: number;
  /** Where the audit log is streamed (docs/governance.md "Streaming"); default: the organizations' own webhooks only. */
  auditStream?: AuditStreamOptions;
}

/** The identity service, the same in both run modes: main.ts serves it, the embedded mode calls it in-process. */
export async function createIdentityService(
  deps: IdentityServiceDeps,
): Promise<ServiceModule & { close(): Promise<void> }> {
  await ensureIdentityIndexes(deps.store);
  // Idempotency records go after their 24 h (docs/operations.md "Retention").
  const idempotencySweeper = await startIdempotencySweeper({ store: deps.store, logger: deps.logger });
  const issuer = await createTokenIssuer(deps.issuer);
  const collections = identityCollections(deps.store);
  const identity = createIdentity({ collections, issuer, freePlanMonthlyRunLimit: deps.freePlanMonthlyRunLimit });
  // The audit log (docs/governance.md): entries past their organization's retention go hourly.
  await ensureAuditIndexes(deps.store);
  // The stream sends what is recorded from the log itself, right after each record and every second.
  const stream = await startAuditStream(deps.store, collections, deps.logger, deps.auditStream);
  const audit = createAuditLog(auditEntries(deps.store), collections, undefined, () => stream?.kick());
  const webhook = deps.auditStream?.webhook;
  const streams = auditStreams(deps.store);
  // Every stream secret sealed under a previous KILN_SECRET_KEY is sealed under the current one.
  const resealed = webhook ? await resealAuditStreamSecrets(streams, webhook.secrets) : 0;
  if (resealed > 0)
    deps.logger.info({ streams: resealed }, "audit stream secrets re-sealed under the current secret key");
  const streamSettings = auditStreamSettingsUseCases(createAccess({ collections, issuer }), {
    streams,
    cursors: exportCursors(deps.store),
    secrets: webhook?.secrets,
    privateHosts: webhook?.privateHosts ?? [],
    changed: () => stream?.kick(),
  });
  const auditSweeper = startSweeper({ logger: deps.logger, what: "audit entries", sweep: () => audit.sweep() });
  // SAML sign-in states and used assertion ids live no longer than the sign-in they guard.
  const samlSweeper = startSweeper({
    logger: deps.logger,
    what: "SAML sign-in states and assertion ids",
    sweep: () => identity.sweepSaml(),
    intervalMs: 600_000,
  });
  const jwks = { jwks: jsonText(issuer.jwks), issuer: issuer.issuer, audience: issuer.audience };
  const service = defineService({
    name: "identity",
    logger: deps.logger,
    register: (router) => {
      registerIdentityRpc(router, identity, () => jwks);
      registerScimRpc(router, identity);
      registerSamlRpc(router, identity);
      registerAuditRpc(router, audit, streamSettings);
    },
    readiness: [{ name: "store", check: () => deps.store.ping() }],
    // Identity verifies API keys itself; every other service asks it.
    auth: { tokens: deps.tokens, verifyApiKey: (key) => identity.verifyApiKey(key) },
    // A retried "create organization" (a double submit, a client's retry) makes one organization.
    idempotency: { store: deps.store, methods: new Set(["/kiln.identity.v1.IdentityService/CreateOrganization"]) },
  });
  return {
    ...service,
    close: async () => {
      await stream?.stop();
      await auditSweeper.stop();
      await samlSweeper.stop();
      await idempotencySweeper.stop();
    },
  };
}
