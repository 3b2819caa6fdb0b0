import { pollUntil, type WaitOptions } from "./poll-until.js";
import type {
  Agent,
  AgentRun,
  AgentRunComparison,
  AgentVersion,
  LoadedAgentInputs,
  Query,
  RequestBody,
  VersionDiff,
  Workflow,
  WorkflowValidation,
} from "./resources.js";
import type { IdempotentRequestOptions, RequestOptions, Transport } from "./transport.js";
import { type FamilyOf, LabelledResource } from "./versioned-resource.js";

type AgentFamily = FamilyOf<"Agent">;
type DiffQuery = Query<"diffAgentVersions">;

/**
 * Agents, their versions and workflows (authoring: public beta; `get` and `run`: stable). `create`
 * makes the agent with an empty draft version 1; `get` answers the `workflow` of `versionId`
 * (default: the draft, else the published one); `createVersion` copies `fromVersionId` (default:
 * the latest) to the new draft (a second draft is 409); `publish` publishes `versionId` (default:
 * the draft), an invalid workflow is 409 with its errors in details; `run` with `mode: "async"`
 * answers at once with a running run to poll.
 */
export class Agents extends LabelledResource<AgentFamily> {
  constructor(t: Transport) {
    super(t, "agents");
  }

  /** Saves the workflow of a draft agent version (400 for a malformed shape, 409 when published). */
  saveWorkflow(agentVersionId: string, workflow: Workflow, options?: RequestOptions): Promise<AgentVersion> {
    const params = { path: { id: agentVersionId } };
    const body = { workflow };
    return this.t.call(
      (init) => this.t.api.PUT("/api/agent-versions/{id}/workflow", { ...init, params, body }),
      options,
    );
  }

  /** Every finding about `workflow` (default: the version's saved one); never throws for what it finds. */
  validateWorkflow(agentVersionId: string, workflow?: Workflow, options?: RequestOptions): Promise<WorkflowValidation> {
    const params = { path: { id: agentVersionId } };
    const body = workflow === undefined ? {} : { workflow };
    const path = "/api/agent-versions/{id}/workflow/validate";
    return this.t.call((init) => this.t.api.POST(path, { ...init, params, body }), options);
  }

  /** The changes from `against` (default: the version before) to `versionId`. */
  diff(id: string, versionId: string, query: DiffQuery = {}, options?: RequestOptions): Promise<VersionDiff> {
    return this.versionDiff(id, versionId, query, options);
  }

  /** Publishes a new version with that version's workflow; answers the agent. */
  rollback(id: string, versionId: string, options?: RequestOptions): Promise<Agent> {
    return this.send(
      "POST",
      "/{id}/versions/{versionId}/rollback",
      { params: { path: { id, versionId } }, body: {} },
      options,
    );
  }
}

/** Stored agent runs: detail, rerun from a step, inputs, comparison (stable, except compare: beta). */
export class AgentRuns {
  constructor(private readonly t: Transport) {}

  get(id: string, options?: RequestOptions): Promise<AgentRun> {
    return this.t.withId(id, (init) => this.t.api.GET("/api/agent-runs/{id}", { ...init }), options);
  }

  /** Polls an asynchronous run until it is no longer running. */
  waitForCompletion(id: string, wait?: WaitOptions, options?: RequestOptions): Promise<AgentRun> {
    return pollUntil(
      () => this.get(id, options),
      (run) => run.status !== "running",
      wait,
    );
  }

  /** A new run of the same agent version reusing the outputs of the steps before `stepId`. */
  rerunFromStep(
    id: string,
    body: RequestBody<"rerunAgentFromStep">,
    options?: IdempotentRequestOptions,
  ): Promise<AgentRun> {
    const path = "/api/agent-runs/{id}/rerun-from-step";
    return this.t.withId(id, (init) => this.t.api.POST(path, { ...init, body }), options, true);
  }

  /** The run's inputs checked against `versionId` (default: the published version). */
  loadInputs(
    id: string,
    body: RequestBody<"loadAgentRunInputs"> = {},
    options?: RequestOptions,
  ): Promise<LoadedAgentInputs> {
    return this.t.withId(id, (init) => this.t.api.POST("/api/agent-runs/{id}/load-inputs", { ...init, body }), options);
  }

  /** Compares 2 to 10 runs of one organization step by step. */
  compare(runIds: string[], options?: RequestOptions): Promise<AgentRunComparison> {
    const params = { query: { runIds: runIds.join(",") } };
    return this.t.call((init) => this.t.api.GET("/api/agent-runs/compare", { ...init, params }), options);
  }
}
