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
import {
  IdParams,
  JsonObject,
  jsonTextMessage,
  optionalJsonTextMessage,
  organizationOf,
  VersionIdQuerystring,
  VersionParams,
} from "./catalog-requests.js";
import { FromVersionBody, MetadataBody, NamedBody, OptionalVersionBody } from "./versioned-bodies.js";
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
  registerVersionedRoutes(app, {
    path: "/api/agents",
    tag: "agents",
    name: "Agent",
    view: AgentView,
    versionView: AgentVersionView,
    list: async (request, options) => {
      const r = await catalog.listAgents(request, options);
      return { data: r.agents.map(agentView), nextCursor: r.nextCursor };
    },
    create: {
      summary: "Create an agent with an empty draft version 1",
      body: NamedBody,
      call: async ({ body: b, request }, options) => {
        const organizationId = organizationOf(request, b.organizationId);
        const r = await catalog.createAgent(
          { organizationId, name: b.name, description: b.description ?? "" },
          options,
        );
        return agentView(r.agent);
      },
    },
    get: {
      summary:
        "An agent (stable up to updatedAt); workflow describes ?versionId= (default: the draft, else the published version)",
      querystring: VersionIdQuerystring,
      stability: "stable",
      call: async (request, options) => agentView((await catalog.getAgent(request, options)).agent),
    },
    update: {
      summary: "Change an agent's name or description",
      body: MetadataBody,
      call: async ({ id, body }, options) =>
        agentView((await catalog.updateAgent({ id, name: body.name, description: body.description }, options)).agent),
    },
    createVersion: {
      summary: "Create the agent's draft version, copied from fromVersionId (default: the latest); one draft at most",
      body: FromVersionBody,
      conflicts: true,
      call: async ({ id, body }, options) => {
        const r = await catalog.createAgentVersion({ agentId: id, fromVersionId: body.fromVersionId ?? "" }, options);
        return agentVersionView(r.version);
      },
    },
    afterCreateVersion: (app) => registerWorkflowRoutes(app, deps),
    publish: {
      summary:
        "Publish an agent version (default: the draft), pinning unversioned references; an invalid workflow is 409",
      body: OptionalVersionBody,
      call: async ({ id, body }, options) => {
        const r = await catalog.publishAgentVersion({ agentId: id, versionId: body.versionId ?? "" }, options);
        return agentView(r.agent);
      },
    },
    diff: async ({ id, versionId, againstVersionId }, options) =>
      (await catalog.diffAgentVersions({ agentId: id, versionId, againstVersionId }, options)).diff,
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
