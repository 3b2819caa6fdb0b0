import { Labels } from "./labels.js";
import { type ListQuery, PaginatedList, pageQuery } from "./paginated-list.js";
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

/** Agents, their versions and workflows (authoring: public beta; `get` and `run`: stable). */
export class Agents {
  /** Named pointers to versions: production (the published version), latest, and your own. */
  readonly labels: Labels;

  constructor(private readonly t: Transport) {
    this.labels = new Labels(t, "agents");
  }

  list(query: ListQuery<Query<"listAgents">> = {}, options?: RequestOptions): PaginatedList<Agent> {
    return new PaginatedList(
      (cursor) =>
        this.t.call(
          (init) => this.t.api.GET("/api/agents", { ...init, params: { query: pageQuery(query, cursor) } }),
          options,
        ),
      query.cursor,
    );
  }

  /** Creates the agent with an empty draft version 1. */
  create(body: RequestBody<"createAgent">, options?: RequestOptions): Promise<Agent> {
    return this.t.call((init) => this.t.api.POST("/api/agents", { ...init, body }), options);
  }

  /** The agent; `workflow` belongs to `versionId` (default: the draft, else the published one). */
  get(id: string, query: Query<"getAgent"> = {}, options?: RequestOptions): Promise<Agent> {
    return this.t.call(
      (init) => this.t.api.GET("/api/agents/{id}", { ...init, params: { path: { id }, query } }),
      options,
    );
  }

  update(id: string, body: RequestBody<"updateAgent">, options?: RequestOptions): Promise<Agent> {
    return this.t.call(
      (init) => this.t.api.PATCH("/api/agents/{id}", { ...init, params: { path: { id } }, body }),
      options,
    );
  }

  /** The agent's new draft, copied from `fromVersionId` (default: the latest); a second draft is 409. */
  createVersion(
    id: string,
    body: RequestBody<"createAgentVersion"> = {},
    options?: RequestOptions,
  ): Promise<AgentVersion> {
    return this.t.call(
      (init) => this.t.api.POST("/api/agents/{id}/versions", { ...init, params: { path: { id } }, body }),
      options,
    );
  }

  /** Saves the workflow of a draft agent version (400 for a malformed shape, 409 when published). */
  saveWorkflow(agentVersionId: string, workflow: Workflow, options?: RequestOptions): Promise<AgentVersion> {
    return this.t.call(
      (init) =>
        this.t.api.PUT("/api/agent-versions/{id}/workflow", {
          ...init,
          params: { path: { id: agentVersionId } },
          body: { workflow },
        }),
      options,
    );
  }

  /** Every finding about `workflow` (default: the version's saved one); never throws for what it finds. */
  validateWorkflow(agentVersionId: string, workflow?: Workflow, options?: RequestOptions): Promise<WorkflowValidation> {
    return this.t.call(
      (init) =>
        this.t.api.POST("/api/agent-versions/{id}/workflow/validate", {
          ...init,
          params: { path: { id: agentVersionId } },
          body: workflow === undefined ? {} : { workflow },
        }),
      options,
    );
  }

  /** Publishes `versionId` (default: the draft); an invalid workflow is 409 with its errors in details. */
  publish(id: string, body: RequestBody<"publishAgentVersion"> = {}, options?: RequestOptions): Promise<Agent> {
    return this.t.call(
      (init) => this.t.api.POST("/api/agents/{id}/publish", { ...init, params: { path: { id } }, body }),
      options,
    );
  }

  diff(
    id: string,
    versionId: string,
    query: Query<"diffAgentVersions"> = {},
    options?: RequestOptions,
  ): Promise<VersionDiff> {
    return this.t.call(
      (init) =>
        this.t.api.GET("/api/agents/{id}/versions/{versionId}/diff", {
          ...init,
          params: { path: { id, versionId }, query },
        }),
      options,
    );
  }

  /** Publishes a new version with that version's workflow; answers the agent. */
  rollback(id: string, versionId: string, options?: RequestOptions): Promise<Agent> {
    return this.t.call(
      (init) =>
        this.t.api.POST("/api/agents/{id}/versions/{versionId}/rollback", {
          ...init,
          params: { path: { id, versionId } },
          body: {},
        }),
      options,
    );
  }

  /** Runs the published version (or `versionId`); `mode: "async"` answers at once with a running run to poll. */
  run(id: string, body: RequestBody<"runAgent">, options?: IdempotentRequestOptions): Promise<AgentRun> {
    return this.t.call(
      (init) => this.t.api.POST("/api/agents/{id}/run", { ...init, params: { path: { id } }, body }),
      options,
      true,
    );
  }
}

/** Stored agent runs: detail, rerun from a step, inputs, comparison (stable, except compare: beta). */
export class AgentRuns {
  constructor(private readonly t: Transport) {}

  get(id: string, options?: RequestOptions): Promise<AgentRun> {
    return this.t.call(
      (init) => this.t.api.GET("/api/agent-runs/{id}", { ...init, params: { path: { id } } }),
      options,
    );
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
    return this.t.call(
      (init) => this.t.api.POST("/api/agent-runs/{id}/rerun-from-step", { ...init, params: { path: { id } }, body }),
      options,
      true,
    );
  }

  /** The run's inputs checked against `versionId` (default: the published version). */
  loadInputs(
    id: string,
    body: RequestBody<"loadAgentRunInputs"> = {},
    options?: RequestOptions,
  ): Promise<LoadedAgentInputs> {
    return this.t.call(
      (init) => this.t.api.POST("/api/agent-runs/{id}/load-inputs", { ...init, params: { path: { id } }, body }),
      options,
    );
  }

  /** Compares 2 to 10 runs of one organization step by step. */
  compare(runIds: string[], options?: RequestOptions): Promise<AgentRunComparison> {
    return this.t.call(
      (init) => this.t.api.GET("/api/agent-runs/compare", { ...init, params: { query: { runIds: runIds.join(",") } } }),
      options,
    );
  }
}
