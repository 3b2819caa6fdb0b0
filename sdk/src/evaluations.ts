import type { ListQuery, PaginatedList } from "./paginated-list.js";
import { pollUntil, type WaitOptions } from "./poll-until.js";
import type {
  Assertion,
  CreateEvaluationCasesRequest,
  EvaluationCase,
  EvaluationComparison,
  EvaluationRun,
  EvaluationRunListItem,
  JudgeRun,
  Query,
  RequestBody,
  StartedEvaluationRun,
} from "./resources.js";
import type { CallInit, IdempotentRequestOptions, RequestOptions, Transport } from "./transport.js";

/** Evaluation cases of a skill and evaluation runs against its draft and/or published version (public beta). */
export class Evaluations {
  constructor(private readonly t: Transport) {}

  listCases(
    skillId: string,
    query: ListQuery<Query<"listEvaluationCases">> = {},
    options?: RequestOptions,
  ): PaginatedList<EvaluationCase> {
    const path = "/api/skills/{id}/evaluation-cases";
    const send = (init: CallInit, wire: Query<"listEvaluationCases">) =>
      this.t.api.GET(path, { ...init, params: { path: { id: skillId }, query: wire } });
    return this.t.page(query, send, options);
  }

  /** Creates 1 to 500 cases at once (all or none); answers them as one page. */
  createCases(
    skillId: string,
    body: CreateEvaluationCasesRequest,
    options?: IdempotentRequestOptions,
  ): Promise<{ data: EvaluationCase[]; nextCursor: string | null }> {
    const path = "/api/skills/{id}/evaluation-cases";
    return this.t.withId(skillId, (init) => this.t.api.POST(path, { ...init, body }), options, true);
  }

  /** Replaces a case's name, input, expected output and assertions; runs started after use them. */
  updateCase(
    skillId: string,
    caseId: string,
    body: Omit<RequestBody<"updateEvaluationCase">, "assertions"> & { assertions?: Assertion[] },
    options?: RequestOptions,
  ): Promise<EvaluationCase> {
    const params = { path: { id: skillId, caseId } };
    const typed = body as RequestBody<"updateEvaluationCase">;
    const path = "/api/skills/{id}/evaluation-cases/{caseId}";
    return this.t.call((init) => this.t.api.PUT(path, { ...init, params, body: typed }), options);
  }

  /** Deletes a case (reports of earlier runs keep its results); answers the deleted case. */
  deleteCase(skillId: string, caseId: string, options?: RequestOptions): Promise<EvaluationCase> {
    const params = { path: { id: skillId, caseId } };
    const path = "/api/skills/{id}/evaluation-cases/{caseId}";
    return this.t.call((init) => this.t.api.DELETE(path, { ...init, params }), options);
  }

  /** The skill's evaluation runs, newest first, with their summaries but not their per-case results. */
  listRuns(
    skillId: string,
    query: ListQuery<Query<"listEvaluationRuns">> = {},
    options?: RequestOptions,
  ): PaginatedList<EvaluationRunListItem> {
    const send = (init: CallInit, wire: Query<"listEvaluationRuns">) =>
      this.t.api.GET("/api/skills/{id}/evaluations", { ...init, params: { path: { id: skillId }, query: wire } });
    return this.t.page(query, send, options);
  }

  /** Starts an evaluation run (202, queued); read it with `get` or `waitForResult`. */
  run(
    skillId: string,
    body: RequestBody<"startEvaluationRun"> = {},
    options?: IdempotentRequestOptions,
  ): Promise<StartedEvaluationRun> {
    const path = "/api/skills/{id}/evaluations/run";
    return this.t.withId(skillId, (init) => this.t.api.POST(path, { ...init, body }), options, true);
  }

  get(skillId: string, evaluationRunId: string, options?: RequestOptions): Promise<EvaluationRun> {
    const params = { path: { id: skillId, evaluationRunId } };
    return this.t.call(
      (init) => this.t.api.GET("/api/skills/{id}/evaluations/{evaluationRunId}", { ...init, params }),
      options,
    );
  }

  /**
   * Cancels a queued or running evaluation run: attempts not yet started never run; the report
   * keeps what finished. Cancelling it again changes nothing; a completed run is a 409.
   */
  cancel(skillId: string, evaluationRunId: string, options?: RequestOptions): Promise<EvaluationRun> {
    const params = { path: { id: skillId, evaluationRunId } };
    const path = "/api/skills/{id}/evaluations/{evaluationRunId}/cancel";
    return this.t.call((init) => this.t.api.POST(path, { ...init, params }), options);
  }

  /** Two completed runs of the skill, case by case on one target: verdicts, pass rates, changes. */
  compare(
    skillId: string,
    query: Query<"compareEvaluationRuns">,
    options?: RequestOptions,
  ): Promise<EvaluationComparison> {
    const params = { path: { id: skillId }, query };
    return this.t.call((init) => this.t.api.GET("/api/skills/{id}/evaluations/compare", { ...init, params }), options);
  }

  /** Polls the run until it has completed, failed or was cancelled. */
  waitForResult(
    skillId: string,
    evaluationRunId: string,
    wait?: WaitOptions,
    options?: RequestOptions,
  ): Promise<EvaluationRun> {
    return pollUntil(
      () => this.get(skillId, evaluationRunId, options),
      (run) => run.status === "completed" || run.status === "failed" || run.status === "cancelled",
      wait,
    );
  }
}

/** The stored runs of llm_judge calls, linked from evaluation outcomes (`judgeRuns[].runId`). */
export class JudgeRuns {
  constructor(private readonly t: Transport) {}

  get(id: string, options?: RequestOptions): Promise<JudgeRun> {
    return this.t.withId(id, (init) => this.t.api.GET("/api/judge-runs/{id}", { ...init }), options);
  }
}
