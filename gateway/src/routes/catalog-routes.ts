import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { registerAgentRoutes } from "./agent-routes.js";
import { registerLabelRoutes } from "./label-routes.js";
import { registerPromptRoutes } from "./prompt-routes.js";
import { registerSkillRoutes } from "./skill-routes.js";
import { registerToolRoutes } from "./tool-routes.js";

/** Prompts, tools, skills and agent authoring (api.md "Prompts", "Tools", "Version diffs", "Skills", "Agents"). */
export function registerCatalogRoutes(app: GatewayApp, deps: GatewayDeps): void {
  registerPromptRoutes(app, deps);
  registerToolRoutes(app, deps);
  registerSkillRoutes(app, deps);
  registerAgentRoutes(app, deps);
  registerLabelRoutes(app, deps);
}
