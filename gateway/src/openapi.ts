import swagger from "@fastify/swagger";
import type { RouteOptions } from "fastify";
import type { TSchema } from "typebox";
import type { GatewayApp } from "./http/gateway-app.js";
import { COMPONENTS } from "./openapi-components.js";
import { ASSERTION_SCHEMA_NAMES } from "./routes/evaluation-assertion-views.js";
import { ErrorEnvelope, ref } from "./schemas.js";

/**
 * The OpenAPI 3.1 document of GET /api/openapi.json, generated from the route schemas: the
 * components are the named schemas (`ref()` points at them), each operation carries its
 * stability class (`x-api-stability`, docs/api.md "Stability") and the error statuses every route of its kind
 * can answer (api.md "Errors"). The SDK's types are generated from it (sdk/openapi.json).
 */

export const SECURITY_SCHEMES = {
  accessToken: {
    type: "http",
    scheme: "bearer",
    bearerFormat: "JWT",
    description: "An access token of the built-in issuer (POST /api/auth/token) or of the configured OIDC issuer",
  },
  apiKeyBearer: {
    type: "http",
    scheme: "bearer",
    bearerFormat: "sk_<id>_<secret>",
    description: "An API key (one organization, a set of scopes) in Authorization: Bearer",
  },
  apiKeyHeader: { type: "apiKey", in: "header", name: "X-API-Key", description: "An API key in X-API-Key" },
} as const;

const errorRef = ref(ErrorEnvelope);

/** What each status means (api.md "Errors"), as the description of each documented response. */
const RESPONSE_DESCRIPTIONS: Record<string, string> = {
  200: "OK",
  201: "Created (a resource, a version or a stored run)",
  202: "Accepted: started asynchronously",
  400: "invalid_argument: bad JSON, a schema violation or an unknown field; details name the fields",
  401: "unauthenticated: missing, malformed, expired or revoked credentials",
  403: "permission_denied: a missing scope, AI not entitled or no AI-platform permission",
  404: "not_found: no such resource for this caller",
  409: "already_exists (a unique key such as toolKey) or failed_precondition (a state conflict)",
  413: "payload_too_large: a body over 1 MiB",
  429: "resource_exhausted: rate limit or plan quota; retry after Retry-After",
  500: "internal: the cause is logged with the request id",
  502: "provider_error: the model provider failed",
  503: "unavailable: a dependency is down; safe to retry",
  504: "provider_timeout: the model provider did not answer in time",
};

/** The route's response schemas, each with the description of its status. */
function describedResponses(response: Record<string, unknown> | undefined) {
  if (!response) return undefined;
  return Object.fromEntries(
    Object.entries(response).map(([status, schema]) => [
      status,
      { ...(schema as object), description: RESPONSE_DESCRIPTIONS[status] ?? "" },
    ]),
  );
}

/**
 * The error statuses a route can answer whatever it does (api.md "Errors"): 429 (rate limit),
 * 500 and 503 anywhere; 401 without credentials; 400 for a bad body, query or path parameter;
 * 413 for a body over 1 MiB; 404 for an id the caller cannot see.
 */
function addStandardErrors(route: RouteOptions): void {
  const schema = route.schema as (Record<string, unknown> & { response?: Record<string, TSchema> }) | undefined;
  if (!schema || schema.hide) return;
  const statuses = [429, 500, 503];
  if (!route.config?.public) statuses.push(401);
  if (schema.body) statuses.push(400, 413);
  if (schema.querystring || schema.params) statuses.push(400);
  if (schema.params) statuses.push(404);
  schema.response ??= {};
  for (const status of statuses) schema.response[status] ??= errorRef;
}

/** Components, the document generator and the hook that completes each route's error responses. */
export async function registerOpenApi(app: GatewayApp): Promise<void> {
  for (const schema of COMPONENTS) app.addSchema(schema);
  app.addHook("onRoute", addStandardErrors);
  await app.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "Kiln API",
        version: "0.1.0",
        description:
          "Prompts, tools, skills, agents, runs and evaluations. Errors use the ErrorEnvelope; lists are {data, nextCursor} with ?limit= and ?cursor=. Each operation's x-api-stability is its class (stable, beta, non-public, legacy: docs/api.md, section Stability); every response carries it as the x-api-stability header, and x-request-id.",
      },
      servers: [
        {
          url: "http://127.0.0.1:8080",
          description: "The platform `pnpm start` runs, at its default address: use your gateway's address instead",
        },
      ],
      components: { securitySchemes: SECURITY_SCHEMES },
      security: Object.keys(SECURITY_SCHEMES).map((name) => ({ [name]: [] })),
    },
    // ajv refuses a discriminator `mapping`; OpenAPI needs one when the type values are not the
    // branches' schema names (openapi-typescript would otherwise type `type` as the names).
    transformObject: (document) =>
      withAssertionMapping("openapiObject" in document ? document.openapiObject : document.swaggerObject),
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
    transform: ({ schema, url, route }) => ({
      schema: {
        ...schema,
        ...(route.config?.documentedBody !== undefined && { body: route.config.documentedBody }),
        response: describedResponses(schema?.response as Record<string, unknown> | undefined),
        "x-api-stability": route.config?.stability ?? "non-public",
      } as typeof schema,
      url,
    }),
  });
}

/** The discriminator mapping of the Assertion union, type value → branch schema, in the document only. */
function withAssertionMapping<D>(document: D): D {
  const schemas = (document as { components?: { schemas?: Record<string, { discriminator?: object }> } }).components
    ?.schemas;
  const union = schemas?.Assertion;
  if (union?.discriminator) {
    union.discriminator = {
      ...union.discriminator,
      mapping: Object.fromEntries(
        Object.entries(ASSERTION_SCHEMA_NAMES).map(([type, name]) => [type, `#/components/schemas/${name}`]),
      ),
    };
  }
  return document;
}
