import type { CreateToolRequest, CreateToolVersionRequest, Query, Tool, VersionDiff } from "./resources.js";
import type { RequestOptions, Transport } from "./transport.js";
import { type BodyArgs, type FamilyOf, VersionedResource } from "./versioned-resource.js";

type ToolFamily = FamilyOf<
  "Tool",
  { create: CreateToolRequest; createVersionArgs: BodyArgs<CreateToolVersionRequest> }
>;
type DiffQuery = Query<"diffToolVersions">;

/**
 * Tools prompts and skills can call, and their versions (docs/api.md "Stability", public beta):
 * `create` makes version 1 (a toolKey already used in the organization is 409 already_exists);
 * `createVersion` makes a new version (omitted fields copied from the current one) that becomes current.
 */
export class Tools extends VersionedResource<ToolFamily> {
  constructor(t: Transport) {
    super(t, "tools");
  }

  get(id: string, options?: RequestOptions): Promise<Tool> {
    return this.t.withId(id, (init) => this.t.api.GET("/api/tools/{id}", { ...init }), options);
  }

  /** The changes from `against` (default: the version before) to `versionId`. */
  diff(id: string, versionId: string, query: DiffQuery = {}, options?: RequestOptions): Promise<VersionDiff> {
    return this.versionDiff(id, versionId, query, options);
  }
}
