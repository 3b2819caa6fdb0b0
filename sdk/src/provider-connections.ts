import type { ListQuery, PaginatedList } from "./paginated-list.js";
import type { ProviderConnection, ProviderConnectionTest, Query, RequestBody } from "./resources.js";
import type { CallInit, RequestOptions, Transport } from "./transport.js";

/**
 * Provider connections: an organization's own model providers, whose models `<name>/<model>` its
 * prompts, skills and agents run (public beta). The key goes in and never comes out (`apiKeyHint`).
 */
export class ProviderConnections {
  constructor(private readonly t: Transport) {}

  create(body: RequestBody<"createProviderConnection">, options?: RequestOptions): Promise<ProviderConnection> {
    return this.t.call((init) => this.t.api.POST("/api/provider-connections", { ...init, body }), options);
  }

  list(
    query: ListQuery<Query<"listProviderConnections">> = {},
    options?: RequestOptions,
  ): PaginatedList<ProviderConnection> {
    const send = (init: CallInit, wire: Query<"listProviderConnections">) =>
      this.t.api.GET("/api/provider-connections", { ...init, params: { query: wire } });
    return this.t.page(query, send, options);
  }

  get(id: string, options?: RequestOptions): Promise<ProviderConnection> {
    return this.t.withId(id, (init) => this.t.api.GET("/api/provider-connections/{id}", { ...init }), options);
  }

  /** A new `apiKey` rotates the key; `models` replaces the list. */
  update(
    id: string,
    body: RequestBody<"updateProviderConnection">,
    options?: RequestOptions,
  ): Promise<ProviderConnection> {
    return this.t.withId(id, (init) => this.t.api.PATCH("/api/provider-connections/{id}", { ...init, body }), options);
  }

  delete(id: string, options?: RequestOptions): Promise<ProviderConnection> {
    return this.t.withId(id, (init) => this.t.api.DELETE("/api/provider-connections/{id}", { ...init }), options);
  }

  /** One cheap call to the provider; a failing provider answers `ok: false`. */
  test(id: string, options?: RequestOptions): Promise<ProviderConnectionTest> {
    return this.t.withId(id, (init) => this.t.api.POST("/api/provider-connections/{id}/test", { ...init }), options);
  }
}
