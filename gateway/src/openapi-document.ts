import { createRouterTransport } from "@connectrpc/connect";
import { createLogger } from "@kiln/kit/logger";
import { buildGateway } from "./app.js";
import { createGatewayDeps } from "./deps.js";

/** The gateway on transports that are never called: its routes and schemas, no service behind them. */
export function buildUnwiredGateway(name: string): ReturnType<typeof buildGateway> {
  const unused = createRouterTransport(() => {});
  return buildGateway(
    createGatewayDeps({
      logger: createLogger({ name, level: "silent" }),
      transports: { identity: unused, catalog: unused, execution: unused, evaluation: unused },
      builtinIssuer: true,
      apiKeyCacheTtlMs: 0,
      rateLimitPerMinute: 0,
    }),
  );
}

/**
 * The OpenAPI document as GET /api/openapi.json serves it, without any service running.
 * `pnpm generate:sdk` writes it to sdk/openapi.json, from which the SDK's types are generated.
 */
export async function buildOpenApiDocument(): Promise<Record<string, unknown>> {
  const gateway = await buildUnwiredGateway("openapi");
  try {
    await gateway.app.ready();
    return gateway.app.swagger() as unknown as Record<string, unknown>;
  } finally {
    await gateway.app.close();
  }
}
