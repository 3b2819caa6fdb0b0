import { LIMITS } from "@kiln/kit/limits";
import type { Agent, AgentVersion, WorkflowIssue } from "@kiln/proto/catalog";
import Type, { type Static } from "typebox";
import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { rpcOptions } from "../http/request.js";
import { jsonTextOf } from "../json-limits.js";
import { Body, errorResponses, List, Nullable, OneOf, ref, Timestamp } from "../schemas.js";
import {
  Description,
  DiffQuerystring,
  Id,
  IdParams,
  JsonObject,
  jsonText,
  ListQuerystring,
  listRequest,
  Name,
  organizationOf,
  VersionIdQuerystring,
  VersionParams,
} from "./catalog-requests.js";
import {
  parseJson,
  VersionDiffView,
  VersionSummaryView,
  versionDiffView,
  versionSummaryView,
} from "./catalog-views.js";
import { iso } from "./views.js";

/**
 * Agent authoring (api.md "Agents", "Version diffs"; spec §9: public beta, except GET
 * /api/agents/:id, which the agent runtime family shares and which is stable up to `updatedAt`).
 * The workflow is configuration of an agent version, never a resource of its own (spec §9 rule 5).
 */

const tags = ["agents"];
const config = { stability: "beta" as const };
const ts = (t: Parameters<typeof iso>[0]) => iso(t) ?? "";
const VersionStatus = OneOf(["draft", "published"]);
const status = (s: string) => s as "draft" | "published";

const WORKFLOW_DESCRIPTION =
  '{inputSchema, entry, steps: [{id, type: "prompt"|"skill"|"tool", ref: {promptId|skillId|toolId, …VersionId?}, input?: {name: binding}, next?: stepId | [{when: JSON Logic, to: stepId}]}], output: "{{steps.<id>.output}}", maxSteps?}';

const Binding = Type.Unknown({
  description: '"{{inputs.x}}", "{{steps.<id>.output}}", "{{steps.<id>.output.field}}" or a literal',
});

export const WorkflowStepView = Type.Object(
  {
    id: Type.String({ description: "a letter or _, then at most 64 letters, digits or _" }),
    type: OneOf(["prompt", "skill", "tool"]),
    ref: Type.Object(
      {
        promptId: Type.Optional(Type.String()),
        promptVersionId: Type.Optional(Type.String()),
        skillId: Type.Optional(Type.String()),
        skillVersionId: Type.Optional(Type.String()),
        toolId: Type.Optional(Type.String()),
        toolVersionId: Type.Optional(Type.String()),
      },
      {
        additionalProperties: false,
        description:
          "the id of the step type's resource and optionally its version (pinned to the published one when the agent version is published)",
      },
    ),
    input: Type.Optional(Type.Record(Type.String(), Binding, { description: "the step's input, by name" })),
    next: Type.Optional(
      Type.Union([
        Type.String({ description: "the next step's id" }),
        Type.Array(
          Type.Object(
            { when: Type.Unknown({ description: "a JSON Logic condition over {inputs, steps}" }), to: Type.String() },
            { additionalProperties: false },
          ),
          { description: "the first condition that holds picks the next step; none ends the run" },
        ),
      ]),
    ),
  },
  { $id: "WorkflowStep", additionalProperties: false },
);

/** An agent version's workflow (api.md "Agents"): configuration, never a resource of its own. */
export const WorkflowView = Type.Object(
  {
    inputSchema: JsonObject("a JSON Schema of the inputs", LIMITS.jsonSchemaBytes),
    entry: Type.String({ description: "the first step's id" }),
    steps: Type.Array(ref(WorkflowStepView), { maxItems: 100 }),
    output: Type.String({ description: '"{{steps.<id>.output}}"' }),
    maxSteps: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000, description: "bounds loops (default 100)" })),
  },
  { $id: "Workflow", additionalProperties: false },
);
type Workflow = Static<typeof WorkflowView>;

/** A version's workflow: `{}` until one is saved. */
const AgentWorkflowView = Type.Union(
  [ref(WorkflowView), Type.Object({}, { additionalProperties: false }), Type.Null()],
  {
    description: "{} until a workflow is saved",
  },
);

export const AgentView = Type.Object(
  {
    id: Type.String(),
    organizationId: Type.String(),
    name: Type.String(),
    description: Type.String(),
    publishedVersionId: Nullable(Type.String()),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    draftVersionId: Nullable(Type.String()),
    versions: Type.Array(ref(VersionSummaryView)),
    describedVersionId: Type.String({
      description: "the version `workflow` belongs to: ?versionId=, else the draft, else the published one",
    }),
    workflow: AgentWorkflowView,
  },
  {
    $id: "Agent",
    description: "The fields up to updatedAt are the stable contract of GET /api/agents/:id; the rest are beta.",
  },
);
export const agentView = (a: Agent | undefined) => {
  if (!a) throw new Error("catalog returned no agent");
  return {
    id: a.id,
    organizationId: a.organizationId,
    name: a.name,
    description: a.description,
    publishedVersionId: a.publishedVersionId || null,
    createdAt: ts(a.createdAt),
    updatedAt: ts(a.updatedAt),
    draftVersionId: a.draftVersionId || null,
    versions: a.versions.map(versionSummaryView),
    describedVersionId: a.describedVersionId,
    workflow: parseJson(a.workflowJson) as Workflow | Record<string, never> | null,
  };
};

export const AgentVersionView = Type.Object(
  {
    id: Type.String(),
    agentId: Type.String(),
    version: Type.Integer(),
    status: VersionStatus,
    workflow: AgentWorkflowView,
    createdAt: Timestamp,
    publishedAt: Nullable(Timestamp),
  },
  { $id: "AgentVersion" },
);
export const agentVersionView = (v: AgentVersion | undefined) => {
  if (!v) throw new Error("catalog returned no agent version");
  return {
    id: v.id,
    agentId: v.agentId,
    version: v.version,
    status: status(v.status),
    workflow: parseJson(v.workflowJson) as Workflow | Record<string, never> | null,
    createdAt: ts(v.createdAt),
    publishedAt: iso(v.publishedAt),
  };
};

export const IssueView = Type.Object(
  {
    path: Type.String({ description: 'into the workflow, e.g. "steps[1].input.city"' }),
    code: Type.String({ description: "e.g. unknown_step, unbounded_cycle, unknown_reference" }),
    message: Type.String(),
  },
  { $id: "WorkflowIssue" },
);
const issueView = (i: WorkflowIssue) => ({ path: i.path, code: i.code, message: i.message });

export const WorkflowValidationView = Type.Object(
  { valid: Type.Boolean(), errors: Type.Array(ref(IssueView)), warnings: Type.Array(ref(IssueView)) },
  { $id: "WorkflowValidation" },
);

const Workflow = JsonObject(WORKFLOW_DESCRIPTION, LIMITS.workflowBytes);

export function registerAgentRoutes(app: GatewayApp, deps: GatewayDeps): void {
  const { catalog } = deps.clients;

  app.get(
    "/api/agents",
    {
      config,
      schema: {
        tags,
        operationId: "listAgents",
        summary: "List an organization's agents, newest first",
        querystring: ListQuerystring,
        response: { 200: List(ref(AgentView)), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const r = await catalog.listAgents(listRequest(request, request.query), rpcOptions(request));
      return { data: r.agents.map(agentView), nextCursor: r.nextCursor || null };
    },
  );

  app.post(
    "/api/agents",
    {
      config,
      schema: {
        tags,
        operationId: "createAgent",
        summary: "Create an agent with an empty draft version 1",
        body: Body({
          organizationId: Type.Optional(
            Type.String({ minLength: 1, maxLength: 100, description: "required unless the caller is an API key" }),
          ),
          name: Name,
          description: Type.Optional(Description),
        }),
        response: { 201: ref(AgentView), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const b = request.body;
      const r = await catalog.createAgent(
        { organizationId: organizationOf(request, b.organizationId), name: b.name, description: b.description ?? "" },
        rpcOptions(request),
      );
      return reply.code(201).send(agentView(r.agent));
    },
  );

  app.get(
    "/api/agents/:id",
    {
      config: { stability: "stable" as const },
      schema: {
        tags,
        operationId: "getAgent",
        summary:
          "An agent (stable up to updatedAt); workflow describes ?versionId= (default: the draft, else the published version)",
        params: IdParams,
        querystring: VersionIdQuerystring,
        response: { 200: ref(AgentView), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const r = await catalog.getAgent(
        { id: request.params.id, versionId: request.query.versionId ?? "" },
        rpcOptions(request),
      );
      return agentView(r.agent);
    },
  );

  app.patch(
    "/api/agents/:id",
    {
      config,
      schema: {
        tags,
        operationId: "updateAgent",
        summary: "Change an agent's name or description",
        params: IdParams,
        body: Body({ name: Type.Optional(Name), description: Type.Optional(Description) }),
        response: { 200: ref(AgentView), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const { name, description } = request.body;
      const r = await catalog.updateAgent({ id: request.params.id, name, description }, rpcOptions(request));
      return agentView(r.agent);
    },
  );

  app.post(
    "/api/agents/:id/versions",
    {
      config,
      schema: {
        tags,
        operationId: "createAgentVersion",
        summary: "Create the agent's draft version, copied from fromVersionId (default: the latest); one draft at most",
        params: IdParams,
        body: Body({ fromVersionId: Type.Optional(Id) }),
        response: { 201: ref(AgentVersionView), ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request, reply) => {
      const r = await catalog.createAgentVersion(
        { agentId: request.params.id, fromVersionId: request.body.fromVersionId ?? "" },
        rpcOptions(request),
      );
      return reply.code(201).send(agentVersionView(r.version));
    },
  );

  app.put(
    "/api/agent-versions/:id/workflow",
    {
      config,
      schema: {
        tags,
        operationId: "saveAgentWorkflow",
        summary: "Save the workflow of a draft agent version (400 for a malformed shape, 409 when published)",
        params: IdParams,
        body: Body({ workflow: Workflow }),
        response: { 200: ref(AgentVersionView), ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request) => {
      const r = await catalog.saveAgentWorkflow(
        { agentVersionId: request.params.id, workflowJson: jsonTextOf(request.body.workflow) },
        rpcOptions(request),
      );
      return agentVersionView(r.version);
    },
  );

  app.post(
    "/api/agent-versions/:id/workflow/validate",
    {
      config,
      schema: {
        tags,
        operationId: "validateAgentWorkflow",
        summary: "Validate a workflow (default: the version's saved one); always 200 with every finding",
        params: IdParams,
        body: Body({ workflow: Type.Optional(Workflow) }),
        response: { 200: ref(WorkflowValidationView), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const workflow = request.body.workflow;
      const r = await catalog.validateAgentWorkflow(
        {
          agentVersionId: request.params.id,
          workflowJson: jsonText(workflow),
        },
        rpcOptions(request),
      );
      return { valid: r.valid, errors: r.errors.map(issueView), warnings: r.warnings.map(issueView) };
    },
  );

  app.post(
    "/api/agents/:id/publish",
    {
      config,
      schema: {
        tags,
        operationId: "publishAgentVersion",
        summary:
          "Publish an agent version (default: the draft), pinning unversioned references; an invalid workflow is 409",
        params: IdParams,
        body: Body({ versionId: Type.Optional(Id) }),
        response: { 200: ref(AgentView), ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request) => {
      const r = await catalog.publishAgentVersion(
        { agentId: request.params.id, versionId: request.body.versionId ?? "" },
        rpcOptions(request),
      );
      return agentView(r.agent);
    },
  );

  app.get(
    "/api/agents/:id/versions/:versionId/diff",
    {
      config,
      schema: {
        tags,
        operationId: "diffAgentVersions",
        summary: "The changes from ?against= (default: the version before) to this agent version",
        params: VersionParams,
        querystring: DiffQuerystring,
        response: { 200: ref(VersionDiffView), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const r = await catalog.diffAgentVersions(
        {
          agentId: request.params.id,
          versionId: request.params.versionId,
          againstVersionId: request.query.against ?? "",
        },
        rpcOptions(request),
      );
      return versionDiffView(r.diff);
    },
  );

  app.post(
    "/api/agents/:id/versions/:versionId/rollback",
    {
      config,
      schema: {
        tags,
        operationId: "rollbackAgentVersion",
        summary: "Publish a new version copying this version's workflow (validated like publish); answers the agent",
        params: VersionParams,
        body: Body({}),
        response: { 200: ref(AgentView), ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request) => {
      const r = await catalog.rollbackAgentVersion(
        { agentId: request.params.id, versionId: request.params.versionId },
        rpcOptions(request),
      );
      return agentView(r.agent);
    },
  );
}
