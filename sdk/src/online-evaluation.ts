import type { ListQuery, PaginatedList } from "./paginated-list.js";
import type { OnlineRule, OnlineScore, OnlineScoreSummary, Query, RequestBody } from "./resources.js";
import type { CallInit, IdempotentRequestOptions, RequestOptions, Transport } from "./transport.js";

/**
 * Online evaluation rules (public beta): each scores a sampled share of production runs or
 * ingested generations with evaluation assertions, off the request path (docs/observability.md
 * "Online evaluation").
 */
export class OnlineRules {
  constructor(private readonly t: Transport) {}

  create(body: RequestBody<"createOnlineRule">, options?: IdempotentRequestOptions): Promise<OnlineRule> {
    return this.t.call((init) => this.t.api.POST("/api/online-rules", { ...init, body }), options, true);
  }

  list(query: ListQuery<Query<"listOnlineRules">> = {}, options?: RequestOptions): PaginatedList<OnlineRule> {
    const send = (init: CallInit, wire: Query<"listOnlineRules">) =>
      this.t.api.GET("/api/online-rules", { ...init, params: { query: wire } });
    return this.t.page(query, send, options);
  }

  get(id: string, options?: RequestOptions): Promise<OnlineRule> {
    return this.t.withId(id, (init) => this.t.api.GET("/api/online-rules/{id}", { ...init }), options);
  }

  /** Renames, enables or disables a rule, changes its rate or replaces its assertions; the target stays. */
  update(id: string, body: RequestBody<"updateOnlineRule">, options?: RequestOptions): Promise<OnlineRule> {
    return this.t.withId(id, (init) => this.t.api.PATCH("/api/online-rules/{id}", { ...init, body }), options);
  }

  /** Deletes the rule; its scores stay. */
  delete(id: string, options?: RequestOptions): Promise<OnlineRule> {
    return this.t.withId(id, (init) => this.t.api.DELETE("/api/online-rules/{id}", { ...init }), options);
  }
}

/** The scores online rules stored, and their summary over time per version and label. */
export class Scores {
  constructor(private readonly t: Transport) {}

  list(query: ListQuery<Query<"listOnlineScores">> = {}, options?: RequestOptions): PaginatedList<OnlineScore> {
    const send = (init: CallInit, wire: Query<"listOnlineScores">) =>
      this.t.api.GET("/api/scores", { ...init, params: { query: wire } });
    return this.t.page(query, send, options);
  }

  summary(query: Query<"summarizeOnlineScores"> = {}, options?: RequestOptions): Promise<OnlineScoreSummary> {
    return this.t.call((init) => this.t.api.GET("/api/scores/summary", { ...init, params: { query } }), options);
  }
}
