/** `/healthz` (the process answers) and `/readyz` (every service it calls is ready, and it is not draining). */
import { failedReadiness } from "@kiln/kit/rpc/server";
import type { GatewayApp, GatewayDeps } from "./gateway-app.js";

export function registerHealthRoutes(app: GatewayApp, deps: GatewayDeps, isDraining: () => boolean): void {
  app.get("/healthz", { config: { public: true }, schema: { hide: true } }, async () => ({ status: "ok" }));
  app.get("/readyz", { config: { public: true }, schema: { hide: true } }, async (_req, reply) => {
    const failed = await failedReadiness(deps.readiness, isDraining);
    return reply
      .code(failed.length === 0 ? 200 : 503)
      .send({ status: failed.length === 0 ? "ok" : "unavailable", failed });
  });
}
