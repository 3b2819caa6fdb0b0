import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Client } from "@connectrpc/connect";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { Bus } from "@kiln/kit/bus";
import type { Logger } from "@kiln/kit/logger";
import type { ReadinessCheck } from "@kiln/kit/rpc/server";
import type { AuditService } from "@kiln/proto/audit";
import type { BudgetService } from "@kiln/proto/budgets";
import type { CatalogService } from "@kiln/proto/catalog";
import type { ProviderConnectionService } from "@kiln/proto/connections";
import type { DatasetService } from "@kiln/proto/datasets";
import type { EvaluationService } from "@kiln/proto/evaluation";
import type { ExecutionService } from "@kiln/proto/execution";
import type { IdentityService } from "@kiln/proto/identity";
import type { ModelRouteService } from "@kiln/proto/model-routes";
import type { OnlineEvaluationService } from "@kiln/proto/online";
import type { ReviewService } from "@kiln/proto/review";
import type { SamlService } from "@kiln/proto/saml";
import type { ScimService } from "@kiln/proto/scim";
import type { TraceService } from "@kiln/proto/traces";
import type { UsageService } from "@kiln/proto/usage";
import type { WebhookService } from "@kiln/proto/webhooks";
import type { FastifyInstance } from "fastify";
import type { Authenticator } from "../auth/authenticator.js";

/** The types every route module is written against: the Fastify instance and what the gateway is built from. */

export interface GatewayClients {
  identity: Client<typeof IdentityService>;
  catalog: Client<typeof CatalogService>;
  execution: Client<typeof ExecutionService>;
  evaluation: Client<typeof EvaluationService>;
  webhooks: Client<typeof WebhookService>;
  online: Client<typeof OnlineEvaluationService>;
  review: Client<typeof ReviewService>;
  datasets: Client<typeof DatasetService>;
  traces: Client<typeof TraceService>;
  connections: Client<typeof ProviderConnectionService>;
  modelRoutes: Client<typeof ModelRouteService>;
  /** SCIM provisioning is the identity service's (docs/scim.md). */
  scim: Client<typeof ScimService>;
  /** SAML sign-in's settings, state and sign-ins are the identity service's (docs/security.md "SAML sign-in"). */
  saml: Client<typeof SamlService>;
  usage: Client<typeof UsageService>;
  /** The audit log is the identity service's (docs/governance.md). */
  audit: Client<typeof AuditService>;
  /** Budgets are the execution service's, beside the ledger they read (docs/budgets.md). */
  budgets: Client<typeof BudgetService>;
}

export interface GatewayDeps {
  logger: Logger;
  clients: GatewayClients;
  authenticator: Authenticator;
  /** The built-in issuer's sign-up, token and JWKS routes are served. */
  builtinIssuer: boolean;
  /** Requests per minute per principal (per client address when anonymous); 0 turns limiting off. */
  rateLimitPerMinute: number;
  readiness: ReadinessCheck[];
  /** The built console (console/dist) served at / (docs/console.md); none: the gateway serves the API only. */
  consoleDir?: string;
  /** Origins browsers may call from (CORS, docs/openai-compatible.md "CORS"); empty or none: CORS off. */
  corsOrigins?: string[];
  /** Listened to for the catalog's changes (docs/mcp.md "List changes"); none: no list-changed notifications. */
  bus?: Bus;
}

export type GatewayApp = FastifyInstance<Server, IncomingMessage, ServerResponse, Logger, TypeBoxTypeProvider>;
