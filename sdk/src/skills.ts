import type { Query, RequestBody, Skill, SkillPreview, SkillRun, VersionDiff } from "./resources.js";
import type { RequestOptions, Transport } from "./transport.js";
import { type FamilyOf, LabelledResource } from "./versioned-resource.js";

type SkillFamily = FamilyOf<"Skill">;
type DiffQuery = Query<"diffSkillVersions">;

/**
 * Skills, their versions, prompt compositions and tools; previews and runs (docs/api.md "Stability",
 * public beta). `create` makes the skill with an empty draft version; `get` answers
 * `promptComposition`, `tools` and the schemas of `versionId` (default: the draft, else the published
 * one); `createVersion` copies `fromVersionId` (default: the latest) to the new draft (a second draft
 * is 409); `publish` publishes `versionId` (default: the draft).
 */
export class Skills extends LabelledResource<SkillFamily> {
  constructor(t: Transport) {
    super(t, "skills");
  }

  /** replacePrompts: replaces the prompt composition of a draft skill version; answers the skill. */
  replacePrompts(
    skillVersionId: string,
    body: RequestBody<"replaceSkillPrompts">,
    options?: RequestOptions,
  ): Promise<Skill> {
    const params = { path: { id: skillVersionId } };
    return this.t.call(
      (init) => this.t.api.POST("/api/skill-versions/{id}/prompts", { ...init, params, body }),
      options,
    );
  }

  /** Replaces the tools every step of a draft skill version may call; answers the skill. */
  replaceTools(
    skillVersionId: string,
    body: RequestBody<"replaceSkillTools">,
    options?: RequestOptions,
  ): Promise<Skill> {
    const params = { path: { id: skillVersionId } };
    return this.t.call((init) => this.t.api.POST("/api/skill-versions/{id}/tools", { ...init, params, body }), options);
  }

  /** Runs the draft (else the published) version without storing anything. */
  preview(id: string, body: RequestBody<"previewSkill">, options?: RequestOptions): Promise<SkillPreview> {
    // openapi-fetch's response typing drops `id: null`; the document's SkillPreview keeps it.
    return this.send("POST", "/{id}/preview", { params: { path: { id } }, body }, options);
  }

  /** The changes from `against` (default: the version before) to `versionId`. */
  diff(id: string, versionId: string, query: DiffQuery = {}, options?: RequestOptions): Promise<VersionDiff> {
    return this.versionDiff(id, versionId, query, options);
  }
}

/** Stored skill runs (docs/api.md "Stability", public beta). */
export class SkillRuns {
  constructor(private readonly t: Transport) {}

  get(id: string, options?: RequestOptions): Promise<SkillRun> {
    return this.t.withId(id, (init) => this.t.api.GET("/api/skill-runs/{id}", { ...init }), options);
  }
}
