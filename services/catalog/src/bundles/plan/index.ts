/**
 * Import plans everything before it writes anything: every id of the bundle is mapped to an
 * existing thing (the same id in this organization, or what an earlier import made of it: the
 * `import_map`) or to a new id, every reference is rewritten through that map, and every version's
 * content is checked as creating it would check it. Kinds are planned in the order they refer to
 * each other: tools, prompts, skills, agents.
 */
import type { Bundle } from "@kiln/contracts/bundle";
import type { Principal } from "@kiln/kit/principal";
import type { CatalogDeps } from "../../catalog-deps.js";
import type { Plan } from "../shared.js";
import { planAgents } from "./agents.js";
import { createPlanContext } from "./context.js";
import { planPrompts } from "./prompts.js";
import { planSkills } from "./skills.js";
import { planTools } from "./tools.js";

export async function plan(
  deps: CatalogDeps,
  principal: Principal,
  organizationId: string,
  bundle: Bundle,
): Promise<Plan> {
  const ctx = createPlanContext(deps, principal, organizationId);
  await planTools(ctx, bundle);
  await planPrompts(ctx, bundle);
  await planSkills(ctx, bundle);
  await planAgents(ctx, bundle);
  ctx.issues.throwIfAny("the bundle is invalid");
  return ctx.p;
}
