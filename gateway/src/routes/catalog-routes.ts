import type { GatewayApp, GatewayDeps } from "../app.js";
import { registerPromptRoutes } from "./prompt-routes.js";
import { registerSkillRoutes } from "./skill-routes.js";
import { registerToolRoutes } from "./tool-routes.js";

/** Prompts, tools and skills (api.md "Prompts", "Tools", "Version diffs", "Skills"). */
export function registerCatalogRoutes(app: GatewayApp, deps: GatewayDeps): void {
  registerPromptRoutes(app, deps);
  registerToolRoutes(app, deps);
  registerSkillRoutes(app, deps);
}
