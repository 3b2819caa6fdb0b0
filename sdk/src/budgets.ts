import type { ListQuery, PaginatedList } from "./paginated-list.js";
import type { Budget, Query, RequestBody } from "./resources.js";
import type { CallInit, RequestOptions, Transport } from "./transport.js";

/**
 * Budgets: spend limits per UTC day or month on the organization, an API key, a prompt or a
 * connection, which block runs (429) or alert (public beta, docs/budgets.md). Each budget carries
 * its current period's `spentUsd`.
 */
export class Budgets {
  constructor(private readonly t: Transport) {}

  create(body: RequestBody<"createBudget">, options?: RequestOptions): Promise<Budget> {
    return this.t.call((init) => this.t.api.POST("/api/budgets", { ...init, body }), options);
  }

  list(query: ListQuery<Query<"listBudgets">> = {}, options?: RequestOptions): PaginatedList<Budget> {
    const send = (init: CallInit, wire: Query<"listBudgets">) =>
      this.t.api.GET("/api/budgets", { ...init, params: { query: wire } });
    return this.t.page(query, send, options);
  }

  get(id: string, options?: RequestOptions): Promise<Budget> {
    return this.t.withId(id, (init) => this.t.api.GET("/api/budgets/{id}", { ...init }), options);
  }

  /** The scope stays; name, limit, period, action and thresholds change. */
  update(id: string, body: RequestBody<"updateBudget">, options?: RequestOptions): Promise<Budget> {
    return this.t.withId(id, (init) => this.t.api.PATCH("/api/budgets/{id}", { ...init, body }), options);
  }

  delete(id: string, options?: RequestOptions): Promise<Budget> {
    return this.t.withId(id, (init) => this.t.api.DELETE("/api/budgets/{id}", { ...init }), options);
  }
}
