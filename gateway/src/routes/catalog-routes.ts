import type { GatewayApp, GatewayDeps } from "../app.js";

/** Prompts, tools and skills (api.md "Prompts", "Tools", "Version diffs", "Skills"). */
export function registerCatalogRoutes(_app: GatewayApp, _deps: GatewayDeps): void {}
