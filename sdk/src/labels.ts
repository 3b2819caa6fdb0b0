import type { ListQuery, PaginatedList } from "./paginated-list.js";
import type { Label, LabelMove } from "./resources.js";
import type { CallInit, RequestOptions, Transport } from "./transport.js";

/** Where a label points, and (prompt labels only) its response-cache default in seconds. */
export interface LabelTarget {
  versionId: string;
  cacheTtlSeconds?: number | null;
}

/**
 * The labels of one family of resources (prompts, skills or agents): named pointers to versions.
 * `production` is the published version (moving it publishes); `latest` is the newest, read-only.
 */
export class Labels {
  /** The three families have the same label routes; the typed paths are the prompts' ones. */
  constructor(
    private readonly t: Transport,
    private readonly family: "prompts" | "skills" | "agents",
  ) {}

  private path<P extends string>(suffix: P) {
    return `/api/${this.family}/{id}/labels${suffix}` as `/api/prompts/{id}/labels${P}`;
  }

  /** Every label: production and latest first (when they exist), then the others by name. */
  async list(id: string, options?: RequestOptions): Promise<Label[]> {
    const page = await this.t.call(
      (init) => this.t.api.GET(this.path(""), { ...init, params: { path: { id } } }),
      options,
    );
    return page.data;
  }

  /**
   * Points `label` at a version; moving production publishes it. A prompt label's response-cache
   * default (docs/cache.md "Defaults") is set with `{versionId, cacheTtlSeconds}` (`null` removes
   * it; left out, it is kept).
   */
  set(id: string, label: string, to: string | LabelTarget, options?: RequestOptions): Promise<Label> {
    const body = typeof to === "string" ? { versionId: to } : to;
    return this.t.call(
      (init) => this.t.api.PUT(this.path("/{label}"), { ...init, params: { path: { id, label } }, body }),
      options,
    );
  }

  /** Removes a label (not production or latest); answers it as it was. */
  delete(id: string, label: string, options?: RequestOptions): Promise<Label> {
    return this.t.call(
      (init) => this.t.api.DELETE(this.path("/{label}"), { ...init, params: { path: { id, label } } }),
      options,
    );
  }

  /** Every move of one label, newest first. */
  history(
    id: string,
    label: string,
    query: ListQuery<{ limit?: string; cursor?: string }> = {},
    options?: RequestOptions,
  ): PaginatedList<LabelMove> {
    const send = (init: CallInit, wire: { limit?: string; cursor?: string }) =>
      this.t.api.GET(this.path("/{label}/history"), { ...init, params: { path: { id, label }, query: wire } });
    return this.t.page(query, send, options);
  }
}
