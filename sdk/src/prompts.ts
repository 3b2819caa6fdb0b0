import { Labels } from "./labels.js";
import { type ListQuery, PaginatedList, pageQuery } from "./paginated-list.js";
import type { CreatePromptVersionRequest, Prompt, PromptRun, PromptVersion, Query, RequestBody } from "./resources.js";
import type { IdempotentRequestOptions, RequestOptions, Transport } from "./transport.js";

/** Prompts and their immutable versions (docs/api.md "Stability", public beta). */
export class Prompts {
  /** Named pointers to versions: production (the published version), latest, and your own. */
  readonly labels: Labels;

  constructor(private readonly t: Transport) {
    this.labels = new Labels(t, "prompts");
  }

  /** An organization's prompts, newest first (an API key may omit organizationId). */
  list(query: ListQuery<Query<"listPrompts">> = {}, options?: RequestOptions): PaginatedList<Prompt> {
    return new PaginatedList(
      (cursor) =>
        this.t.call(
          (init) => this.t.api.GET("/api/prompts", { ...init, params: { query: pageQuery(query, cursor) } }),
          options,
        ),
      query.cursor,
    );
  }

  create(body: RequestBody<"createPrompt">, options?: RequestOptions): Promise<Prompt> {
    return this.t.call((init) => this.t.api.POST("/api/prompts", { ...init, body }), options);
  }

  /** The prompt, with `version` the one `versionId` names (default: the published one, else the latest). */
  get(id: string, query: Query<"getPrompt"> = {}, options?: RequestOptions): Promise<Prompt> {
    return this.t.call(
      (init) => this.t.api.GET("/api/prompts/{id}", { ...init, params: { path: { id }, query } }),
      options,
    );
  }

  update(id: string, body: RequestBody<"updatePrompt">, options?: RequestOptions): Promise<Prompt> {
    return this.t.call(
      (init) => this.t.api.PATCH("/api/prompts/{id}", { ...init, params: { path: { id } }, body }),
      options,
    );
  }

  /** Creates an immutable draft version. */
  createVersion(id: string, body: CreatePromptVersionRequest, options?: RequestOptions): Promise<PromptVersion> {
    return this.t.call(
      (init) => this.t.api.POST("/api/prompts/{id}/versions", { ...init, params: { path: { id } }, body }),
      options,
    );
  }

  /** Publishes a draft version; answers the prompt. */
  publish(id: string, body: RequestBody<"publishPromptVersion">, options?: RequestOptions): Promise<Prompt> {
    return this.t.call(
      (init) => this.t.api.POST("/api/prompts/{id}/publish", { ...init, params: { path: { id } }, body }),
      options,
    );
  }

  /** Runs the published version (or `versionId`) and stores the run. */
  run(id: string, body: RequestBody<"runPrompt">, options?: IdempotentRequestOptions): Promise<PromptRun> {
    return this.t.call(
      (init) => this.t.api.POST("/api/prompts/{id}/run", { ...init, params: { path: { id } }, body }),
      options,
      true,
    );
  }
}
