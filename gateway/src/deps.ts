import { createClient, type Transport } from "@connectrpc/connect";
import { createRemoteIdentityAuth } from "@kiln/kit/authorizer";
import type { Bus } from "@kiln/kit/bus";
import type { Logger } from "@kiln/kit/logger";
import type { ReadinessCheck } from "@kiln/kit/rpc/server";
import { AuditService } from "@kiln/proto/audit";
import { BudgetService } from "@kiln/proto/budgets";
import { CatalogService } from "@kiln/proto/catalog";
import { ProviderConnectionService } from "@kiln/proto/connections";
import { DatasetService } from "@kiln/proto/datasets";
import { EvaluationService } from "@kiln/proto/evaluation";
import { ExecutionService } from "@kiln/proto/execution";
import { Health, HealthCheckResponse_ServingStatus } from "@kiln/proto/health";
import { IdentityService } from "@kiln/proto/identity";
import { ModelRouteService } from "@kiln/proto/model-routes";
import { OnlineEvaluationService } from "@kiln/proto/online";
import { ReviewService } from "@kiln/proto/review";
import { SamlService } from "@kiln/proto/saml";
import { ScimService } from "@kiln/proto/scim";
import { TraceService } from "@kiln/proto/traces";
import { UsageService } from "@kiln/proto/usage";
import { WebhookService } from "@kiln/proto/webhooks";
import { createAuthenticator, type OidcOptions } from "./auth/authenticator.js";
import type { GatewayDeps } from "./http/gateway-app.js";

export interface GatewayWiring {
  logger: Logger;
  /** One transport per service; in-process in the embedded mode, HTTP/2 in the distributed one. */
  transports: { identity: Transport; catalog: Transport; execution: Transport; evaluation: Transport };
  builtinIssuer: boolean;
  oidc?: OidcOptions;
  apiKeyCacheTtlMs: number;
  rateLimitPerMinute: number;
  /** The built console served at /; none: the API only. */
  consoleDir?: string;
  /** Origins browsers may call from (CORS); none: CORS off. */
  corsOrigins?: string[];
  /** The bus, listened to for the catalog's changes (MCP list-changed notifications); none: no notifications. */
  bus?: Bus;
}

/** The gateway's dependencies, the same for both run modes. */
export function createGatewayDeps(w: GatewayWiring): GatewayDeps {
  const identity = createClient(IdentityService, w.transports.identity);
  const identityAuth = createRemoteIdentityAuth(identity, { ttlMs: w.apiKeyCacheTtlMs });
  // Ready when every service reports ready over the standard health protocol.
  const readiness: ReadinessCheck[] = Object.entries(w.transports).map(([name, transport]) => ({
    name,
    check: async () => {
      const r = await createClient(Health, transport).check({ service: "readiness" }, { timeoutMs: 1_500 });
      if (r.status !== HealthCheckResponse_ServingStatus.SERVING) throw new Error(`${name} is not ready`);
    },
  }));
  return {
    logger: w.logger,
    clients: {
      identity,
      catalog: createClient(CatalogService, w.transports.catalog),
      execution: createClient(ExecutionService, w.transports.execution),
      evaluation: createClient(EvaluationService, w.transports.evaluation),
      // Served by the evaluation process (docs/webhooks.md "Where it runs").
      webhooks: createClient(WebhookService, w.transports.evaluation),
      // Online evaluation is the evaluation service's (docs/observability.md "Online evaluation").
      online: createClient(OnlineEvaluationService, w.transports.evaluation),
      // Human review is served by the evaluation process too (docs/review.md).
      review: createClient(ReviewService, w.transports.evaluation),
      // And datasets (docs/datasets.md).
      datasets: createClient(DatasetService, w.transports.evaluation),
      // Served by the execution process (docs/observability.md).
      traces: createClient(TraceService, w.transports.execution),
      // Provider connections are the execution service's (docs/providers.md "Connections").
      connections: createClient(ProviderConnectionService, w.transports.execution),
      // Model routes are the execution service's (docs/providers.md "Routes").
      modelRoutes: createClient(ModelRouteService, w.transports.execution),
      // SCIM provisioning is the identity service's (docs/scim.md).
      scim: createClient(ScimService, w.transports.identity),
      // And SAML sign-in's settings and state (docs/security.md "SAML sign-in").
      saml: createClient(SamlService, w.transports.identity),
      // The usage ledger is the execution service's (docs/usage.md).
      usage: createClient(UsageService, w.transports.execution),
      // The audit log is the identity service's (docs/governance.md).
      audit: createClient(AuditService, w.transports.identity),
      // And the budgets, beside the ledger they read (docs/budgets.md).
      budgets: createClient(BudgetService, w.transports.execution),
    },
    authenticator: createAuthenticator({
      identity,
      identityAuth,
      builtinIssuer: w.builtinIssuer,
      oidc: w.oidc,
      apiKeyCacheTtlMs: w.apiKeyCacheTtlMs,
    }),
    builtinIssuer: w.builtinIssuer,
    rateLimitPerMinute: w.rateLimitPerMinute,
    readiness,
    consoleDir: w.consoleDir,
    corsOrigins: w.corsOrigins ?? [],
    bus: w.bus,
  };
}
