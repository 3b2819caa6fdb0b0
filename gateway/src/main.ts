import { existsSync } from "node:fs";
import { join } from "node:path";
import { createInternalTokens } from "@kiln/kit/auth";
import { createNatsBus } from "@kiln/kit/bus/nats";
import { exitOnSignal, guardUncaughtExceptions } from "@kiln/kit/lifecycle";
import { createLogger } from "@kiln/kit/logger";
import { createForwardInterceptor } from "@kiln/kit/rpc/auth-interceptor";
import { createNetworkTransport } from "@kiln/kit/rpc/transport";
import { buildGateway } from "./app.js";
import { corsOriginsOf, loadConfig, oidcOf } from "./config.js";
import { createGatewayDeps } from "./deps.js";

const config = loadConfig();
const logger = createLogger({ name: "gateway", level: config.LOG_LEVEL });
guardUncaughtExceptions(logger);
const forward = createForwardInterceptor(createInternalTokens(config.INTERNAL_AUTH_SECRET), {
  type: "service",
  id: "gateway",
});
const connect = (baseUrl: string, defaultTimeoutMs?: number) =>
  createNetworkTransport({ baseUrl, interceptors: [forward], defaultTimeoutMs, logger });
const services = {
  identity: connect(config.IDENTITY_URL),
  catalog: connect(config.CATALOG_URL),
  // A run may take several model calls, each up to the provider deadline: its own, longer budget.
  execution: connect(config.EXECUTION_URL, config.RUN_TIMEOUT_MS),
  evaluation: connect(config.EVALUATION_URL),
};
/** CONSOLE_DIR when it holds a built console; otherwise the API alone, said once. */
function consoleDirOf(dir: string): string | undefined {
  if (dir === "") return undefined;
  if (existsSync(join(dir, "index.html"))) return dir;
  logger.warn({ consoleDir: dir }, "CONSOLE_DIR holds no built console (index.html): serving the API only");
  return undefined;
}

// Only listened to (the catalog's changes, for MCP sessions): the gateway creates no stream.
const bus = config.NATS_URL
  ? await createNatsBus({ url: config.NATS_URL, name: "kiln-gateway", prefix: config.NATS_PREFIX })
  : undefined;
const gateway = await buildGateway(
  createGatewayDeps({
    logger,
    transports: {
      identity: services.identity.transport,
      catalog: services.catalog.transport,
      execution: services.execution.transport,
      evaluation: services.evaluation.transport,
    },
    builtinIssuer: config.BUILTIN_ISSUER_ENABLED,
    oidc: oidcOf(config),
    apiKeyCacheTtlMs: config.API_KEY_CACHE_TTL_MS,
    rateLimitPerMinute: config.RATE_LIMIT_PER_MINUTE,
    consoleDir: consoleDirOf(config.CONSOLE_DIR),
    corsOrigins: corsOriginsOf(config.CORS_ORIGINS),
    bus,
  }),
);
const address = await gateway.app.listen({ host: config.HOST, port: config.PORT });
logger.info({ address }, "gateway listening");
exitOnSignal(logger, config.SHUTDOWN_GRACE_MS, async () => {
  gateway.startDraining();
  await gateway.app.close();
  for (const s of Object.values(services)) s.close();
  await bus?.close();
});
