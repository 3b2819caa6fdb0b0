import { type ListQuery, PaginatedList, pageQuery } from "./paginated-list.js";
import type {
  CreateToolRequest,
  CreateToolVersionRequest,
  Query,
  RequestBody,
  Tool,
  ToolVersion,
  VersionDiff,
} from "./resources.js";
import type { RequestOptions, Transport } from "./transport.js";

/** Tools prompts and skills can call, and their versions (docs/api.md "Stability", public beta). */
export class Tools {
  constructor(private readonly t: Transport) {}

  list(query: ListQuery<Query<"listTools">> = {}, options?: RequestOptions): PaginatedList<Tool> {
    return new PaginatedList(
      (cursor) =>
        this.t.call(
          (init) => this.t.api.GET("/api/tools", { ...init, params: { query: pageQuery(query, cursor) } }),
          options,
        ),
      query.cursor,
    );
  }

  /** Creates the tool with its version 1; a toolKey already used in the organization is 409 already_exists. */
  create(body: CreateToolRequest, options?: RequestOptions): Promise<Tool> {
    return this.t.call((init) => this.t.api.POST("/api/tools", { ...init, body }), options);
  }

  get(id: string, options?: RequestOptions): Promise<Tool> {
    return this.t.call((init) => this.t.api.GET("/api/tools/{id}", { ...init, params: { path: { id } } }), options);
  }

  update(id: string, body: RequestBody<"updateTool">, options?: RequestOptions): Promise<Tool> {
    return this.t.call(
      (init) => this.t.api.PATCH("/api/tools/{id}", { ...init, params: { path: { id } }, body }),
      options,
    );
  }

  /** A new version (omitted fields copied from the current one) that becomes current. */
  createVersion(id: string, body: CreateToolVersionRequest, options?: RequestOptions): Promise<ToolVersion> {
    return this.t.call(
      (init) => this.t.api.POST("/api/tools/{id}/versions", { ...init, params: { path: { id } }, body }),
      options,
    );
  }

  /** The changes from `against` (default: the version before) to `versionId`. */
  diff(
    id: string,
    versionId: string,
    query: Query<"diffToolVersions"> = {},
    options?: RequestOptions,
  ): Promise<VersionDiff> {
    return this.t.call(
      (init) =>
        this.t.api.GET("/api/tools/{id}/versions/{versionId}/diff", {
          ...init,
          params: { path: { id, versionId }, query },
        }),
      options,
    );
  }
}
