import { createRouterTransport } from "@connectrpc/connect";
import { createLogger } from "@kiln/kit/logger";
import { buildGateway } from "./app.js";
import { createGatewayDeps } from "./deps.js";

/**
 * The OpenAPI document as GET /api/openapi.json serves it, without any service running: the
 * gateway is built on transports that are never called. `pnpm generate:sdk` writes it to
 * sdk/openapi.json, from which the SDK's types are generated.
 */
export async function buildOpenApiDocument(): Promise<Record<string, unknown>> {
  const unused = createRouterTransport(() => {});
  const gateway = await buildGateway(
    createGatewayDeps({
      logger: createLogger({ name: "openapi", level: "silent" }),
      transports: { identity: unused, catalog: unused, execution: unused, evaluation: unused },
      builtinIssuer: true,
      apiKeyCacheTtlMs: 0,
      rateLimitPerMinute: 0,
    }),
  );
  try {
    await gateway.app.ready();
    return gateway.app.swagger() as unknown as Record<string, unknown>;
  } finally {
    await gateway.app.close();
  }
}
