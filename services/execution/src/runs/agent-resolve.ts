/** Stage one of an agent run, resolve: the agent version and what each of its steps runs. */
import type { Client } from "@connectrpc/connect";
import { failedPrecondition } from "@kiln/kit/errors";
import { remote } from "@kiln/kit/rpc/errors";
import type { ProviderRegistry } from "@kiln/models/registry";
import type { CatalogService, ResolveAgentVersionResponse } from "@kiln/proto/catalog";
import { type RouteResolver, routedRegistry } from "../model-routes/routed-registry.js";
import type { ExecutableTool } from "../tools/tool-executor.js";
import { type CallContext, catalogCallOptions } from "./call-context.js";
import { parseJson } from "./run-input.js";
import { type RunnablePrompt, resolveModelFor, runnableOf, type SkillStep, skillStepsOf, toolOf } from "./runnable.js";
import { parseWorkflow, type Workflow } from "./workflow-engine.js";

/** A skill an agent step runs, its composition ready to run. */
export interface AgentSkill {
  skillId: string;
  skillVersionId: string;
  inputSchema: unknown;
  steps: SkillStep[];
}

/** An agent version ready to run: its workflow and what each step runs. */
export interface RunnableAgent {
  agentId: string;
  agentVersionId: string;
  organizationId: string;
  workflow: Workflow;
  prompts: Map<string, RunnablePrompt>;
  skills: Map<string, AgentSkill>;
  tools: Map<string, ExecutableTool>;
  /** The models as the agent's organization sees them, the routes its steps name included: the steps run with these. */
  models: ProviderRegistry;
}

export interface AgentResolveDeps {
  catalog: Client<typeof CatalogService>;
  models: ProviderRegistry;
  /** Lets a step's model be one of the organization's routes, "route/<name>" (docs/providers.md "Routes"). */
  routes?: RouteResolver;
}

function workflowOf(json: string): Workflow {
  try {
    return parseWorkflow(json);
  } catch (e) {
    throw failedPrecondition(`the agent version cannot run: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** The agent version from the catalog (with the caller's principal), every step's model checked. */
export async function resolveAgent(
  deps: AgentResolveDeps,
  req: { organizationId: string; agentId: string; versionId: string; label?: string },
  ctx: CallContext,
): Promise<RunnableAgent> {
  const resolved: ResolveAgentVersionResponse = await remote(
    deps.catalog.resolveAgentVersion(
      { organizationId: req.organizationId, agentId: req.agentId, versionId: req.versionId, label: req.label ?? "" },
      catalogCallOptions(ctx),
    ),
  );
  const version = resolved.version;
  if (!version) throw new Error("catalog returned no agent version");
  const workflow = workflowOf(version.workflow?.json ?? "");
  // Every model a step names (a prompt step's, each prompt of a skill step's), its routes loaded once.
  const named = resolved.steps.flatMap((s) => [
    s.prompt?.version?.content?.model,
    ...(s.skill?.steps ?? []).map((k) => k.prompt?.version?.content?.model),
  ]);
  const models = await routedRegistry(deps.models, deps.routes, version.organizationId, named);
  const agent: RunnableAgent = {
    agentId: version.agentId,
    agentVersionId: version.id,
    organizationId: version.organizationId,
    workflow,
    prompts: new Map(),
    skills: new Map(),
    tools: new Map(),
    models,
  };
  const byId = new Map(resolved.steps.map((s) => [s.stepId, s]));
  for (const step of workflow.steps) {
    const r = byId.get(step.id);
    const field = `steps.${step.id}.model`;
    if (step.type === "prompt" && r?.prompt) {
      const prompt = runnableOf(r.prompt);
      await resolveModelFor(models, prompt.model, field, prompt.organizationId);
      agent.prompts.set(step.id, prompt);
    } else if (step.type === "skill" && r?.skill?.version) {
      const skill = r.skill;
      agent.skills.set(step.id, {
        skillId: skill.version?.skillId ?? "",
        skillVersionId: skill.version?.id ?? "",
        inputSchema: parseJson(skill.version?.content?.inputSchema?.json, { type: "object" }),
        steps: await skillStepsOf(models, skill, () => field, "catalog returned an incomplete skill step"),
      });
    } else if (step.type === "tool" && r?.tool) {
      agent.tools.set(step.id, toolOf(r.tool, version.organizationId));
    } else {
      throw failedPrecondition(`the agent version cannot run: step "${step.id}" has no resolved ${step.type}`);
    }
  }
  return agent;
}
