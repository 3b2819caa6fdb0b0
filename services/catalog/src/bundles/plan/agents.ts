import type { Bundle } from "@kiln/contracts/bundle";
import { workflowDetails } from "../../agents.js";
import { fieldPath } from "../../domain/issues.js";
import type { JsonObject } from "../../domain/json-schema.js";
import { parseWorkflow, REF_KEYS } from "../../domain/workflow.js";
import type { AgentDoc, AgentVersionDoc } from "../../store/catalog-store.js";
import { toDate } from "../shared.js";
import type { PlanContext } from "./context.js";
import { versionedPlanner } from "./versioned.js";

/** Plans the bundle's agents: every step ref of a workflow rewritten to ids here, the workflow checked. */
export async function planAgents(ctx: PlanContext, bundle: Bundle): Promise<void> {
  const { organizationId, issues, refer, mapNew, insert } = ctx;
  await versionedPlanner(ctx).planEach<AgentDoc, AgentVersionDoc, Bundle["agents"][number]>("agent", bundle.agents, {
    async planVersion(_agent, v, vField, agentId) {
      const workflow = await rewriteWorkflow(v.workflow, fieldPath(vField, "workflow"));
      if (Object.keys(workflow).length > 0) {
        const shape = parseWorkflow(workflow).issues;
        for (const d of workflowDetails(shape)) issues.add(fieldPath(vField, d.field), d.issue);
      }
      const id = mapNew(v.id, "av");
      insert("agentVersions", {
        _id: id,
        agentId,
        organizationId,
        version: v.version,
        status: v.status,
        workflow: JSON.stringify(workflow),
        createdAt: new Date(v.createdAt),
        updatedAt: toDate(v.publishedAt) ?? new Date(v.createdAt),
        publishedAt: toDate(v.publishedAt),
      } satisfies AgentVersionDoc);
      return id;
    },
  });

  /** A workflow with every step ref's ids (and pinned version ids) rewritten to ids here. */
  async function rewriteWorkflow(workflow: Record<string, unknown>, field: string): Promise<JsonObject> {
    const steps = workflow.steps;
    if (!Array.isArray(steps)) return workflow as JsonObject;
    const collections = {
      prompt: ["prompts", "promptVersions"],
      skill: ["skills", "skillVersions"],
      tool: ["tools", "toolVersions"],
    } as const;
    const rewritten = [];
    for (const [k, step] of steps.entries()) {
      const type = (step as { type?: unknown })?.type;
      const ref = (step as { ref?: unknown })?.ref;
      if (
        typeof type !== "string" ||
        !Object.hasOwn(REF_KEYS, type) ||
        typeof ref !== "object" ||
        ref === null ||
        Array.isArray(ref)
      ) {
        rewritten.push(step);
        continue;
      }
      const keys = REF_KEYS[type as keyof typeof REF_KEYS];
      const [parents, versions] = collections[type as keyof typeof collections];
      const refField = fieldPath(fieldPath(fieldPath(field, "steps"), k), "ref");
      const newRef: Record<string, unknown> = { ...(ref as Record<string, unknown>) };
      const id = newRef[keys.id];
      if (typeof id === "string") newRef[keys.id] = await refer(parents, id, fieldPath(refField, keys.id));
      const versionId = newRef[keys.version];
      if (typeof versionId === "string")
        newRef[keys.version] = await refer(versions, versionId, fieldPath(refField, keys.version));
      rewritten.push({ ...(step as object), ref: newRef });
    }
    return { ...workflow, steps: rewritten } as JsonObject;
  }
}
