import type { ListQuery, PaginatedList } from "./paginated-list.js";
import { pollUntil, type WaitOptions } from "./poll-until.js";
import type {
  PromptEvaluation,
  PromptEvaluationComparison,
  PromptEvaluationListItem,
  Query,
  RequestBody,
  StartedEvaluationRun,
} from "./resources.js";
import type { CallInit, IdempotentRequestOptions, RequestOptions, Transport } from "./transport.js";

/**
 * Prompt evaluations (public beta): a dataset's items run on versions (or labels) of a prompt, on
 * their own model or side by side on several, every output judged by the same assertions.
 */
export class PromptEvaluations {
  constructor(private readonly t: Transport) {}

  /** Starts one (202, queued); read it with `get` or `waitForResult`. */
  run(
    promptId: string,
    body: RequestBody<"startPromptEvaluation">,
    options?: IdempotentRequestOptions,
  ): Promise<StartedEvaluationRun> {
    const path = "/api/prompts/{id}/evaluations/run";
    return this.t.withId(promptId, (init) => this.t.api.POST(path, { ...init, body }), options, true);
  }

  get(promptId: string, evaluationRunId: string, options?: RequestOptions): Promise<PromptEvaluation> {
    const params = { path: { id: promptId, evaluationRunId } };
    const path = "/api/prompts/{id}/evaluations/{evaluationRunId}";
    return this.t.call((init) => this.t.api.GET(path, { ...init, params }), options);
  }

  /** The prompt's evaluations, newest first, with their summaries but not their per-item results. */
  list(
    promptId: string,
    query: ListQuery<Query<"listPromptEvaluations">> = {},
    options?: RequestOptions,
  ): PaginatedList<PromptEvaluationListItem> {
    const send = (init: CallInit, wire: Query<"listPromptEvaluations">) =>
      this.t.api.GET("/api/prompts/{id}/evaluations", { ...init, params: { path: { id: promptId }, query: wire } });
    return this.t.page(query, send, options);
  }

  /** Attempts not yet started never run; the report keeps what finished. */
  cancel(promptId: string, evaluationRunId: string, options?: RequestOptions): Promise<PromptEvaluation> {
    const params = { path: { id: promptId, evaluationRunId } };
    const path = "/api/prompts/{id}/evaluations/{evaluationRunId}/cancel";
    return this.t.call((init) => this.t.api.POST(path, { ...init, params }), options);
  }

  /** Two completed evaluations item by item on one target key both have. */
  compare(
    promptId: string,
    query: Query<"comparePromptEvaluations">,
    options?: RequestOptions,
  ): Promise<PromptEvaluationComparison> {
    const params = { path: { id: promptId }, query };
    const path = "/api/prompts/{id}/evaluations/compare";
    return this.t.call((init) => this.t.api.GET(path, { ...init, params }), options);
  }

  /** Polls until it has completed, failed or was cancelled. */
  waitForResult(
    promptId: string,
    evaluationRunId: string,
    wait?: WaitOptions,
    options?: RequestOptions,
  ): Promise<PromptEvaluation> {
    return pollUntil(
      () => this.get(promptId, evaluationRunId, options),
      (run) => run.status === "completed" || run.status === "failed" || run.status === "cancelled",
      wait,
    );
  }
}
