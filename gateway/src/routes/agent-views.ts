import { LIMITS } from "@kiln/kit/limits";
import type { Agent, AgentVersion, WorkflowIssue } from "@kiln/proto/catalog";
import Type, { type Static } from "typebox";
import { OneOf, ref } from "../schemas.js";
import { JsonObject } from "./catalog-requests.js";
import { fromCatalog, parseJson } from "./catalog-views.js";
import { describedShape, OptionalVersionId, resourceShape, versionShape } from "./versioned-views.js";

/** The response schemas of agent authoring and their conversions from the catalog's messages. */

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

/** A version's workflow, as its view. */
const workflowOf = (w: { json: string } | undefined) => parseJson(w?.json) as Workflow | Record<string, never> | null;

export const AgentView = resourceShape.schema(
  { publishedVersionId: OptionalVersionId },
  {
    draftVersionId: OptionalVersionId,
    ...describedShape.schema("the version `workflow` belongs to"),
    workflow: AgentWorkflowView,
  },
  {
    $id: "Agent",
    description: "The fields up to updatedAt are the stable contract of GET /api/agents/:id; the rest are beta.",
  },
);
export const agentView = fromCatalog.view("agent", (a: Agent) =>
  resourceShape.view(
    a,
    { publishedVersionId: a.publishedVersionId || null },
    { draftVersionId: a.draftVersionId || null, ...describedShape.view(a), workflow: workflowOf(a.workflow) },
  ),
);

export const AgentVersionView = versionShape.schema(
  { agentId: Type.String() },
  { workflow: AgentWorkflowView },
  { $id: "AgentVersion" },
);
export const agentVersionView = fromCatalog.view("agent version", (v: AgentVersion) =>
  versionShape.view(v, { agentId: v.agentId }, { workflow: workflowOf(v.workflow) }),
);

export const IssueView = Type.Object(
  {
    path: Type.String({ description: 'into the workflow, e.g. "steps[1].input.city"' }),
    code: Type.String({ description: "e.g. unknown_step, unbounded_cycle, unknown_reference" }),
    message: Type.String(),
  },
  { $id: "WorkflowIssue" },
);
export const issueView = (i: WorkflowIssue) => ({ path: i.path, code: i.code, message: i.message });

export const WorkflowValidationView = Type.Object(
  { valid: Type.Boolean(), errors: Type.Array(ref(IssueView)), warnings: Type.Array(ref(IssueView)) },
  { $id: "WorkflowValidation" },
);
