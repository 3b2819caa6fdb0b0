import cookie from "@fastify/cookie";
import cors from "@fastify/cors";
import rateLimit from "@fastify/rate-limit";
import fastifyStatic from "@fastify/static";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { newId } from "@kiln/kit/ids";
import { LIMITS } from "@kiln/kit/limits";
import { credentialOf } from "@kiln/kit/rpc/auth-interceptor";
import { type FastifyReply, type FastifyRequest, fastify } from "fastify";
import Type from "typebox";
import { assertDeclaredCredential } from "./auth/route-security.js";
import { sessionTokenOf } from "./auth/session-cookie.js";
import { malformedTextIssues } from "./body-text.js";
import { HttpError, handleError } from "./errors.js";
import type { GatewayApp, GatewayDeps } from "./http/gateway-app.js";
import { registerHealthRoutes } from "./http/health-routes.js";
import { registerStagedClose } from "./http/staged-close.js";
import { jsonDepthExceeds, MAX_BODY_DEPTH } from "./json-depth.js";
import { jsonBytesKeyword } from "./json-limits.js";
import { lazyValidators } from "./lazy-validators.js";
import { registerMcpRoute } from "./mcp/route.js";
import { registerOpenApi } from "./openapi.js";
import { registerAgentRunRoutes } from "./routes/agent-run-routes.js";
import { handleAnthropicError, isAnthropicRequest } from "./routes/anthropic-errors.js";
import { registerAnthropicMessagesRoute } from "./routes/anthropic-messages-routes.js";
import { registerBudgetRoutes } from "./routes/budget-routes.js";
import { registerBundleRoutes } from "./routes/bundle-routes.js";
import { registerCatalogRoutes } from "./routes/catalog-routes.js";
import { registerDatasetRoutes } from "./routes/dataset-routes.js";
import { registerEvaluationRoutes } from "./routes/evaluation-routes.js";
import { registerIdentityProviderRoutes } from "./routes/identity-provider-routes.js";
import { registerIdentityRoutes } from "./routes/identity-routes.js";
import { registerModelRouteRoutes } from "./routes/model-route-routes.js";
import { registerModelRoutes } from "./routes/model-routes.js";
import { registerOnlineRoutes } from "./routes/online-routes.js";
import { handleOpenAiError, isOpenAiPath, unknownUrl } from "./routes/openai-errors.js";
import { registerOpenAiResponsesRoute } from "./routes/openai-responses-routes.js";
import { registerOpenAiRoutes } from "./routes/openai-routes.js";
import { registerPromptRunStreamRoute } from "./routes/prompt-run-stream-route.js";
import { registerProviderConnectionRoutes } from "./routes/provider-connection-routes.js";
import { registerReviewRoutes } from "./routes/review-routes.js";
import { registerRunListRoutes } from "./routes/run-list-routes.js";
import { registerRunRoutes } from "./routes/run-routes.js";
import { registerTraceRoutes } from "./routes/trace-routes.js";
import { registerUsageRoutes } from "./routes/usage-routes.js";
import { registerWebhookRoutes } from "./routes/webhook-routes.js";
import { addSecurityHeaders, securityHeadersOf } from "./security-headers.js";

export type { GatewayApp, GatewayClients, GatewayDeps } from "./http/gateway-app.js";

export const MAX_BODY_BYTES = LIMITS.bodyBytes;

const REQUEST_ID = /^[\w.:-]{1,128}$/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds.
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

const isApiPath = (url: string) => url === "/api" || url.startsWith("/api/") || url.startsWith("/api?");

/** The REST gateway (HTTP/1.1): authentication, the error envelope, the /api routes, OpenAPI. Never listens. */
/** A browser asking for a page of the console rather than the API. */
function isConsolePage(method: string, url: string, accept: string | undefined): boolean {
  if (method !== "GET" || !accept?.includes("text/html")) return false;
  return !/^\/(api|v1|\.well-known|healthz|readyz)(\/|\?|$)/.test(url);
}

export async function buildGateway(deps: GatewayDeps) {
  let draining = false;
  const validators = lazyValidators();
  const app: GatewayApp = fastify({
    loggerInstance: deps.logger,
    bodyLimit: MAX_BODY_BYTES,
    requestIdHeader: false,
    genReqId: (req) => {
      const sent = req.headers["x-request-id"];
      return typeof sent === "string" && REQUEST_ID.test(sent) ? sent : newId("req");
    },
    ajv: {
      plugins: [jsonBytesKeyword],
      customOptions: {
        coerceTypes: false,
        removeAdditional: false,
        allErrors: true,
        useDefaults: false,
        allowUnionTypes: true,
        discriminator: true,
      },
    },
    routerOptions: { ignoreTrailingSlash: true },
    // Each route's request schemas compiled on its first request, not while the gateway starts.
    schemaController: { compilersFactory: { buildValidator: validators.buildValidator } },
    // Errors Fastify raises before routing (a malformed URL such as "/api/%zz") leave in the
    // envelope with the request id too, instead of Fastify's own body.
    frameworkErrors: (error, request, reply) => {
      // No hook runs for these: they carry the security headers themselves.
      reply.headers(securityHeadersOf("application/json"));
      reply.header("x-request-id", request.id);
      if (isApiPath(request.url)) reply.header("x-api-stability", "non-public");
      handleError(error, request, reply);
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.decorateRequest("principal", null);
  app.decorateRequest("idempotentReplayed", false);
  app.decorateRequest("runTraceparent", "");
  app.addHook("onSend", addSecurityHeaders);
  app.addHook("onSend", async (request, reply) => {
    if (request.idempotentReplayed) reply.header("idempotent-replayed", "true");
    if (request.runTraceparent) reply.header("traceparent", request.runTraceparent);
  });
  // Responses are written as the views build them: free-form user JSON keeps every key in its
  // order; the response schemas document them (and a test checks them), they do not reshape them.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));

  // JSON only. An empty body reads as {} so routes whose fields are all optional take none;
  // "__proto__" keys stay plain data (JSON.parse never touches prototypes).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("application/json", { parseAs: "string" }, (_req, raw, done) => {
    const text = typeof raw === "string" ? raw : raw.toString("utf8");
    if (text.trim() === "") return done(null, {});
    if (jsonDepthExceeds(text)) {
      return done(
        new HttpError("invalid_argument", `the request body is nested too deeply (at most ${MAX_BODY_DEPTH} levels)`, [
          { field: "body", issue: `nests objects and arrays more than ${MAX_BODY_DEPTH} levels deep` },
        ]),
        undefined,
      );
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return done(new HttpError("invalid_argument", "the request body is not valid JSON"), undefined);
    }
    const malformed = malformedTextIssues(text, body);
    if (malformed.length > 0) {
      return done(
        new HttpError("invalid_argument", "the request body holds text that is not valid Unicode", malformed),
      );
    }
    done(null, body);
  });

  await registerOpenApi(app);

  // CORS (docs/openai-compatible.md "CORS"), off unless origins are configured. Registered before
  // authentication so that a preflight (which carries no credentials) is answered first.
  if (deps.corsOrigins && deps.corsOrigins.length > 0) {
    await app.register(cors, {
      origin: deps.corsOrigins,
      methods: ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"],
      exposedHeaders: ["x-request-id", "x-kiln-run-id", "x-kiln-cost-usd", "x-should-retry", "traceparent"],
      maxAge: 600,
    });
  }

  // The console's session cookie (auth/session-cookie.ts), parsed before authentication.
  await app.register(cookie);

  // Authentication runs before the body is read: an anonymous caller never gets a body parsed.
  registerStagedClose(app);
  app.addHook("onRequest", async (request, reply) => {
    reply.header("x-request-id", request.id);
    const config = request.routeOptions.config;
    if (isApiPath(request.url) || request.url.startsWith("/.well-known/")) {
      reply.header("x-api-stability", config?.stability ?? "non-public");
    }
    if (config?.public || !request.routeOptions.url) return;
    const credential =
      credentialOf((name) => {
        const value = request.headers[name];
        return typeof value === "string" ? value : undefined;
      }) ?? (isApiPath(request.url) ? sessionTokenOf(request) : undefined);
    if (!credential)
      throw new HttpError(
        "unauthenticated",
        "missing credentials: send Authorization: Bearer <token or API key>, or X-API-Key: <API key>",
      );
    request.principal = await deps.authenticator.authenticate(credential, request.id);
    assertDeclaredCredential(request.routeOptions.schema?.security, request.principal);
  });

  if (deps.rateLimitPerMinute > 0) {
    // After authentication (onRequest), before the body is read; per gateway replica.
    await app.register(rateLimit, {
      hook: "preParsing",
      max: deps.rateLimitPerMinute,
      timeWindow: 60_000,
      keyGenerator: (request) =>
        request.principal ? `${request.principal.type}:${request.principal.id}` : `ip:${request.ip}`,
      allowList: (request) => request.url === "/healthz" || request.url === "/readyz",
      errorResponseBuilder: (_request, context) =>
        new HttpError(
          "resource_exhausted",
          `rate limit of ${context.max} requests per minute exceeded; retry in ${context.after}`,
        ),
    });
  }

  app.addHook("preValidation", async (request) => {
    // No id holds a control character: such a path names nothing, and never reaches a service.
    const params = request.params as Record<string, unknown> | undefined;
    for (const value of Object.values(params ?? {})) {
      if (typeof value === "string" && CONTROL_CHARACTER.test(value)) {
        throw new HttpError("not_found", `no ${request.routeOptions.url ?? "resource"} with that id`);
      }
    }
    // Bodyless writes get {} so that their schema reports missing fields instead of "body must be object".
    if (request.body === undefined && ["POST", "PUT", "PATCH"].includes(request.method)) request.body = {};
  });

  // /v1 errors in OpenAI's shape, or Anthropic's for its Messages route and its clients (docs/anthropic-compatible.md).
  const handleV1Error = (error: unknown, request: FastifyRequest, reply: FastifyReply) =>
    isAnthropicRequest(request)
      ? handleAnthropicError(error, request, reply)
      : handleOpenAiError(error, request, reply);
  app.setErrorHandler((error, request, reply) =>
    isOpenAiPath(request.url) ? handleV1Error(error, request, reply) : handleError(error, request, reply),
  );
  app.setNotFoundHandler((request, reply) => {
    // A page of the console (a path its router knows) opened or reloaded in a browser.
    if (deps.consoleDir && isConsolePage(request.method, request.url, request.headers.accept)) {
      return reply.type("text/html").header("cache-control", "no-cache").sendFile("index.html");
    }
    const error = new HttpError("not_found", `no route ${request.method} ${request.url.split("?")[0]}`);
    return isOpenAiPath(request.url)
      ? handleV1Error(unknownUrl(request.method, request.url), request, reply)
      : handleError(error, request, reply);
  });

  if (deps.consoleDir) {
    await app.register(fastifyStatic, { root: deps.consoleDir, serve: false });
    const page = { config: { public: true }, schema: { hide: true } };
    app.get("/", page, (_request, reply) =>
      reply.type("text/html").header("cache-control", "no-cache").sendFile("index.html"),
    );
    // Hashed file names: cached for a year.
    app.get("/assets/*", page, (request, reply) =>
      reply.sendFile(`assets/${(request.params as { "*": string })["*"]}`, { immutable: true, maxAge: "365d" }),
    );
  }

  registerHealthRoutes(app, deps, () => draining);

  registerIdentityRoutes(app, deps);
  registerModelRoutes(app, deps);
  registerProviderConnectionRoutes(app, deps);
  registerCatalogRoutes(app, deps);
  registerRunRoutes(app, deps);
  registerPromptRunStreamRoute(app, deps);
  registerRunListRoutes(app, deps);
  registerUsageRoutes(app, deps);
  registerBudgetRoutes(app, deps);
  registerAgentRunRoutes(app, deps);
  registerEvaluationRoutes(app, deps);
  registerOpenAiRoutes(app, deps);
  registerOpenAiResponsesRoute(app, deps);
  registerAnthropicMessagesRoute(app, deps);
  registerWebhookRoutes(app, deps);
  registerModelRouteRoutes(app, deps);
  registerOnlineRoutes(app, deps);
  registerReviewRoutes(app, deps);
  registerDatasetRoutes(app, deps);
  registerBundleRoutes(app, deps);
  registerMcpRoute(app, deps);
  registerTraceRoutes(app, deps);
  registerIdentityProviderRoutes(app, deps);

  app.get(
    "/api/openapi.json",
    {
      config: { public: true, stability: "non-public" },
      schema: {
        tags: ["openapi"],
        operationId: "getOpenApiDocument",
        summary: "This document",
        security: [],
        response: {
          200: Type.Object(
            {
              openapi: Type.Literal("3.1.0"),
              info: Type.Object({ title: Type.String(), version: Type.String() }, { additionalProperties: true }),
            },
            { additionalProperties: true },
          ),
        },
      },
    },
    async () => app.swagger() as { openapi: "3.1.0"; info: { title: string; version: string } },
  );

  return {
    app,
    /** Compiles every route schema not compiled yet (a broken one throws); how many there were. */
    compileRouteSchemas: validators.compileAll,
    startDraining() {
      draining = true;
    },
  };
}
