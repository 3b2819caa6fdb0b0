import { Labels } from "./labels.js";
import { type ListQuery, PaginatedList, pageQuery } from "./paginated-list.js";
import type { Query, RequestBody, Skill, SkillPreview, SkillRun, SkillVersion, VersionDiff } from "./resources.js";
import type { IdempotentRequestOptions, RequestOptions, Transport } from "./transport.js";

/** Skills, their versions, prompt compositions and tools; previews and runs (docs/api.md "Stability", public beta). */
export class Skills {
  /** Named pointers to versions: production (the published version), latest, and your own. */
  readonly labels: Labels;

  constructor(private readonly t: Transport) {
    this.labels = new Labels(t, "skills");
  }

  list(query: ListQuery<Query<"listSkills">> = {}, options?: RequestOptions): PaginatedList<Skill> {
    return new PaginatedList(
      (cursor) =>
        this.t.call(
          (init) => this.t.api.GET("/api/skills", { ...init, params: { query: pageQuery(query, cursor) } }),
          options,
        ),
      query.cursor,
    );
  }

  /** Creates the skill with an empty draft version. */
  create(body: RequestBody<"createSkill">, options?: RequestOptions): Promise<Skill> {
    return this.t.call((init) => this.t.api.POST("/api/skills", { ...init, body }), options);
  }

  /** The skill; `promptComposition`, `tools` and the schemas describe `versionId` (default: the draft, else the published one). */
  get(id: string, query: Query<"getSkill"> = {}, options?: RequestOptions): Promise<Skill> {
    return this.t.call(
      (init) => this.t.api.GET("/api/skills/{id}", { ...init, params: { path: { id }, query } }),
      options,
    );
  }

  update(id: string, body: RequestBody<"updateSkill">, options?: RequestOptions): Promise<Skill> {
    return this.t.call(
      (init) => this.t.api.PATCH("/api/skills/{id}", { ...init, params: { path: { id } }, body }),
      options,
    );
  }

  /** The skill's new draft, copied from `fromVersionId` (default: the latest); a second draft is 409. */
  createVersion(
    id: string,
    body: RequestBody<"createSkillVersion"> = {},
    options?: RequestOptions,
  ): Promise<SkillVersion> {
    return this.t.call(
      (init) => this.t.api.POST("/api/skills/{id}/versions", { ...init, params: { path: { id } }, body }),
      options,
    );
  }

  /** Publishes `versionId` (default: the draft); answers the skill. */
  publish(id: string, body: RequestBody<"publishSkillVersion"> = {}, options?: RequestOptions): Promise<Skill> {
    return this.t.call(
      (init) => this.t.api.POST("/api/skills/{id}/publish", { ...init, params: { path: { id } }, body }),
      options,
    );
  }

  /** replacePrompts: replaces the prompt composition of a draft skill version; answers the skill. */
  replacePrompts(
    skillVersionId: string,
    body: RequestBody<"replaceSkillPrompts">,
    options?: RequestOptions,
  ): Promise<Skill> {
    return this.t.call(
      (init) =>
        this.t.api.POST("/api/skill-versions/{id}/prompts", {
          ...init,
          params: { path: { id: skillVersionId } },
          body,
        }),
      options,
    );
  }

  /** Replaces the tools every step of a draft skill version may call; answers the skill. */
  replaceTools(
    skillVersionId: string,
    body: RequestBody<"replaceSkillTools">,
    options?: RequestOptions,
  ): Promise<Skill> {
    return this.t.call(
      (init) =>
        this.t.api.POST("/api/skill-versions/{id}/tools", { ...init, params: { path: { id: skillVersionId } }, body }),
      options,
    );
  }

  /** Runs the draft (else the published) version without storing anything. */
  preview(id: string, body: RequestBody<"previewSkill">, options?: RequestOptions): Promise<SkillPreview> {
    // openapi-fetch's response typing drops `id: null`; the document's SkillPreview keeps it.
    return this.t.call(
      (init) => this.t.api.POST("/api/skills/{id}/preview", { ...init, params: { path: { id } }, body }),
      options,
    ) as Promise<unknown> as Promise<SkillPreview>;
  }

  /** Runs the published version (or `versionId`) and stores the run. */
  run(id: string, body: RequestBody<"runSkill">, options?: IdempotentRequestOptions): Promise<SkillRun> {
    return this.t.call(
      (init) => this.t.api.POST("/api/skills/{id}/run", { ...init, params: { path: { id } }, body }),
      options,
      true,
    );
  }

  diff(
    id: string,
    versionId: string,
    query: Query<"diffSkillVersions"> = {},
    options?: RequestOptions,
  ): Promise<VersionDiff> {
    return this.t.call(
      (init) =>
        this.t.api.GET("/api/skills/{id}/versions/{versionId}/diff", {
          ...init,
          params: { path: { id, versionId }, query },
        }),
      options,
    );
  }
}

/** Stored skill runs (docs/api.md "Stability", public beta). */
export class SkillRuns {
  constructor(private readonly t: Transport) {}

  get(id: string, options?: RequestOptions): Promise<SkillRun> {
    return this.t.call(
      (init) => this.t.api.GET("/api/skill-runs/{id}", { ...init, params: { path: { id } } }),
      options,
    );
  }
}
