import { type ListQuery, PaginatedList, pageQuery } from "./paginated-list.js";
import { pollUntil, type WaitOptions } from "./poll-until.js";
import type {
  Assertion,
  CreateEvaluationCasesRequest,
  EvaluationCase,
  EvaluationComparison,
  EvaluationRun,
  JudgeRun,
  Query,
  RequestBody,
  StartedEvaluationRun,
} from "./resources.js";
import type { IdempotentRequestOptions, RequestOptions, Transport } from "./transport.js";

/** Evaluation cases of a skill and evaluation runs against its draft and/or published version (public beta). */
export class Evaluations {
  constructor(private readonly t: Transport) {}

  listCases(
    skillId: string,
    query: ListQuery<Query<"listEvaluationCases">> = {},
    options?: RequestOptions,
  ): PaginatedList<EvaluationCase> {
    return new PaginatedList(
      (cursor) =>
        this.t.call(
          (init) =>
            this.t.api.GET("/api/skills/{id}/evaluation-cases", {
              ...init,
              params: { path: { id: skillId }, query: pageQuery(query, cursor) },
            }),
          options,
        ),
      query.cursor,
    );
  }

  /** Creates 1 to 500 cases at once (all or none); answers them as one page. */
  createCases(
    skillId: string,
    body: CreateEvaluationCasesRequest,
    options?: IdempotentRequestOptions,
  ): Promise<{ data: EvaluationCase[]; nextCursor: string | null }> {
    return this.t.call(
      (init) =>
        this.t.api.POST("/api/skills/{id}/evaluation-cases", { ...init, params: { path: { id: skillId } }, body }),
      options,
      true,
    );
  }

  /** Replaces a case's name, input, expected output and assertions; runs started after use them. */
  updateCase(
    skillId: string,
    caseId: string,
    body: Omit<RequestBody<"updateEvaluationCase">, "assertions"> & { assertions?: Assertion[] },
    options?: RequestOptions,
  ): Promise<EvaluationCase> {
    return this.t.call(
      (init) =>
        this.t.api.PUT("/api/skills/{id}/evaluation-cases/{caseId}", {
          ...init,
          params: { path: { id: skillId, caseId } },
          body: body as RequestBody<"updateEvaluationCase">,
        }),
      options,
    );
  }

  /** Starts an evaluation run (202, queued); read it with `get` or `waitForResult`. */
  run(
    skillId: string,
    body: RequestBody<"startEvaluationRun"> = {},
    options?: IdempotentRequestOptions,
  ): Promise<StartedEvaluationRun> {
    return this.t.call(
      (init) =>
        this.t.api.POST("/api/skills/{id}/evaluations/run", { ...init, params: { path: { id: skillId } }, body }),
      options,
      true,
    );
  }

  get(skillId: string, evaluationRunId: string, options?: RequestOptions): Promise<EvaluationRun> {
    return this.t.call(
      (init) =>
        this.t.api.GET("/api/skills/{id}/evaluations/{evaluationRunId}", {
          ...init,
          params: { path: { id: skillId, evaluationRunId } },
        }),
      options,
    );
  }

  /**
   * Cancels a queued or running evaluation run: attempts not yet started never run; the report
   * keeps what finished. Cancelling it again changes nothing; a completed run is a 409.
   */
  cancel(skillId: string, evaluationRunId: string, options?: RequestOptions): Promise<EvaluationRun> {
    return this.t.call(
      (init) =>
        this.t.api.POST("/api/skills/{id}/evaluations/{evaluationRunId}/cancel", {
          ...init,
          params: { path: { id: skillId, evaluationRunId } },
        }),
      options,
    );
  }

  /** Two completed runs of the skill, case by case on one target: verdicts, pass rates, changes. */
  compare(
    skillId: string,
    query: Query<"compareEvaluationRuns">,
    options?: RequestOptions,
  ): Promise<EvaluationComparison> {
    return this.t.call(
      (init) =>
        this.t.api.GET("/api/skills/{id}/evaluations/compare", {
          ...init,
          params: { path: { id: skillId }, query },
        }),
      options,
    );
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
    return this.t.call(
      (init) => this.t.api.GET("/api/judge-runs/{id}", { ...init, params: { path: { id } } }),
      options,
    );
  }
}
