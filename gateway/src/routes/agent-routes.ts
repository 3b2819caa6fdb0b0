import { LIMITS } from "@kiln/kit/limits";
import Type from "typebox";
import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { answers, operations } from "../http/operation.js";
import { rpcOptions } from "../http/request.js";
import { Body } from "../schemas.js";
import {
  AgentVersionView,
  AgentView,
  agentVersionView,
  agentView,
  issueView,
  WorkflowValidationView,
} from "./agent-views.js";
import { IdParams, JsonObject, jsonTextMessage, optionalJsonTextMessage, VersionParams } from "./catalog-requests.js";
import { changeMetadata, copyToDraft, createByName, publishVersion } from "./versioned-bodies.js";
import { registerVersionedRoutes } from "./versioned-routes.js";

/**
 * Agent authoring (api.md "Agents", "Version diffs"; docs/api.md "Stability": public beta, except GET
 * /api/agents/:id, which the agent runtime family shares and which is stable up to `updatedAt`).
 * The workflow is configuration of an agent version, never a resource of its own (docs/concepts.md "Agent").
 */

const op = operations({ tags: ["agents"], stability: "beta" });

const WORKFLOW_DESCRIPTION =
  '{inputSchema, entry, steps: [{id, type: "prompt"|"skill"|"tool", ref: {promptId|skillId|toolId, …VersionId?}, input?: {name: binding}, next?: stepId | [{when: JSON Logic, to: stepId}]}], output: "{{steps.<id>.output}}", maxSteps?}';

const Workflow = JsonObject(WORKFLOW_DESCRIPTION, LIMITS.workflowBytes);

export function registerAgentRoutes(app: GatewayApp, deps: GatewayDeps): void {
  const { catalog } = deps.clients;
  registerVersionedRoutes(app, "Agent", {
    view: agentView,
    versionView: agentVersionView,
    list: catalog.listAgents,
    create: createByName("Create an agent with an empty draft version 1", catalog.createAgent),
    get: {
      summary:
        "An agent (stable up to updatedAt); workflow describes ?versionId= (default: the draft, else the published version)",
      stability: "stable",
      call: catalog.getAgent,
    },
    update: changeMetadata("Change an agent's name or description", catalog.updateAgent),
    createVersion: copyToDraft(
      "Create the agent's draft version, copied from fromVersionId (default: the latest); one draft at most",
      (agentId, fromVersionId, options) => catalog.createAgentVersion({ agentId, fromVersionId }, options),
    ),
    afterCreateVersion: (app) => registerWorkflowRoutes(app, deps),
    publish: publishVersion(
      "Publish an agent version (default: the draft), pinning unversioned references; an invalid workflow is 409",
      (agentId, versionId, options) => catalog.publishAgentVersion({ agentId, versionId }, options),
    ),
    diff: ({ id, ...versions }, options) => catalog.diffAgentVersions({ agentId: id, ...versions }, options),
  });

  app.post(
    "/api/agents/:id/versions/:versionId/rollback",
    op(
      "rollbackAgentVersion",
      "Publish a new version copying this version's workflow (validated like publish); answers the agent",
      { params: VersionParams, body: Body({}), response: answers(AgentView, 400, 401, 403, 404, 409) },
    ),
    async (request) => {
      const r = await catalog.rollbackAgentVersion(
        { agentId: request.params.id, versionId: request.params.versionId },
        rpcOptions(request),
      );
      return agentView(r.agent);
    },
  );
}

/** A draft version's workflow: saved whole, or validated without saving. */
function registerWorkflowRoutes(app: GatewayApp, deps: GatewayDeps): void {
  const { catalog } = deps.clients;

  app.put(
    "/api/agent-versions/:id/workflow",
    op(
      "saveAgentWorkflow",
      "Save the workflow of a draft agent version (400 for a malformed shape, 409 when published)",
      {
        params: IdParams,
        body: Body({ workflow: Workflow }),
        response: answers(AgentVersionView, 400, 401, 403, 404, 409),
      },
    ),
    async (request) => {
      const r = await catalog.saveAgentWorkflow(
        { agentVersionId: request.params.id, workflow: jsonTextMessage(request.body.workflow) },
        rpcOptions(request),
      );
      return agentVersionView(r.version);
    },
  );

  app.post(
    "/api/agent-versions/:id/workflow/validate",
    op(
      "validateAgentWorkflow",
      "Validate a workflow (default: the version's saved one); always 200 with every finding",
      {
        params: IdParams,
        body: Body({ workflow: Type.Optional(Workflow) }),
        response: answers(WorkflowValidationView, 400, 401, 403, 404),
      },
    ),
    async (request) => {
      const workflow = request.body.workflow;
      const r = await catalog.validateAgentWorkflow(
        {
          agentVersionId: request.params.id,
          workflow: optionalJsonTextMessage(workflow),
        },
        rpcOptions(request),
      );
      return { valid: r.valid, errors: r.errors.map(issueView), warnings: r.warnings.map(issueView) };
    },
  );
}
