import Type from "typebox";
import { Nullable, OneOf, ref, Timestamp } from "../schemas.js";
import { FreeJson } from "./catalog-views.js";
import { OutputView, RunCommonFields, RunStatus, STEP_EXECUTION_FIELDS, UsageView } from "./run-views.js";

/** The response schemas of agent runs and run comparisons (docs/api.md "Agent runs"). */

/** A step of an agent run (api.md "Agents"): stable contract. */
export const AgentStepView = Type.Object(
  {
    stepId: Type.String(),
    type: OneOf(["prompt", "skill", "tool"]),
    status: RunStatus,
    input: FreeJson,
    output: OutputView,
    runId: Type.Optional(Type.String({ description: "the child prompt or skill run the step stored" })),
    ...STEP_EXECUTION_FIELDS,
    reused: Type.Boolean({ description: "true when a rerun reused the parent run's recorded output" }),
  },
  { $id: "AgentRunStep" },
);

/** The agent run: the shared run shape of api.md "Runs" with the agent fields. Stable contract. */
export const AgentRunView = Type.Object(
  {
    id: Type.String(),
    kind: OneOf(["agent"]),
    ...RunCommonFields,
    status: OneOf(["succeeded", "failed", "running", "cancelled"], {
      description:
        "running: an asynchronous run not finished yet (poll it); cancelled: a synchronous run its caller cancelled (an MCP client)",
    }),
    completedAt: Nullable(Timestamp, { description: "null while running" }),
    agentId: Type.String(),
    agentVersionId: Type.String(),
    steps: Type.Array(ref(AgentStepView)),
    parentRunId: Type.Optional(Type.String({ description: "set on a rerun: the run it reused" })),
    rerunFromStepId: Type.Optional(Type.String()),
  },
  { $id: "AgentRun" },
);

export const InputIssueView = Type.Object({
  path: Type.String({ description: 'e.g. "inputs.language"' }),
  code: OneOf(["required", "not_allowed", "invalid_value"]),
  message: Type.String(),
});

export const LoadedInputsView = Type.Object(
  {
    agentId: Type.String(),
    agentVersionId: Type.String(),
    inputs: FreeJson,
    validation: Type.Object({ valid: Type.Boolean(), errors: Type.Array(InputIssueView) }),
  },
  { $id: "LoadedAgentInputs" },
);

const StepTotalsView = Type.Object({
  usage: ref(UsageView),
  estimatedCostUsd: Nullable(Type.Number()),
  latencyMs: Type.Integer(),
});

export const AgentRunComparisonView = Type.Object(
  {
    runs: Type.Array(
      Type.Object({
        id: Type.String(),
        agentId: Type.String(),
        agentVersionId: Type.String(),
        status: OneOf(["succeeded", "failed", "running", "cancelled"]),
        createdAt: Timestamp,
      }),
    ),
    steps: Type.Array(
      Type.Object({
        stepId: Type.String(),
        byRun: Type.Record(
          Type.String(),
          Nullable(
            Type.Object({ status: RunStatus, output: OutputView, usage: ref(UsageView), latencyMs: Type.Integer() }),
            { description: "null: that run did not execute the step" },
          ),
          { description: "by run id" },
        ),
        outputsEqual: Type.Boolean(),
      }),
    ),
    totals: Type.Record(Type.String(), StepTotalsView, { description: "by run id" }),
  },
  { $id: "AgentRunComparison" },
);
