/**
 * The lifecycle every versioned family shares (prompts, tools, skills, agents): find a resource
 * the caller may use, list a page of them with their versions, change name and description, and
 * the checks publish makes of every version. A family configures it with where its resources and
 * versions are kept and keeps only what its versions hold.
 */
import { type DomainError, failedPrecondition, invalidArgument, notFound } from "@kiln/kit/errors";
import { LIMITS } from "@kiln/kit/limits";
import { findPage } from "@kiln/kit/pagination";
import type { Principal } from "@kiln/kit/principal";
import type { Collection } from "@kiln/kit/store";
import type { Scope } from "../access.js";
import type { CatalogDeps } from "../catalog-deps.js";
import type { Issues } from "../domain/issues.js";
import { versionSummaries } from "./version-store.js";

/** What every versioned resource document carries. */
export interface ResourceDoc {
  _id: string;
  organizationId: string;
  name: string;
  description: string;
  updatedAt: Date;
}

/** What every version document carries. */
export interface VersionDoc {
  _id: string;
  version: number;
}

/** Where one family keeps its resources and versions. */
export interface VersionedFamily<P extends ResourceDoc, V extends VersionDoc> {
  /** The resource's name in errors and access checks ("prompt", "tool", "skill", "agent"). */
  noun: string;
  parents: Collection<P>;
  versions: Collection<V>;
  /** The version field naming its resource ("promptId", ...). */
  parentField: string;
  parentOf: (version: V) => string;
}

/** `version` N is already published: a second publish is refused. */
export const alreadyPublished = (noun: string, version: { version: number }): DomainError =>
  failedPrecondition(`${noun} version ${version.version} is already published`, [
    { field: "versionId", issue: "is already published" },
  ]);

/** Checks a new description (multi-line, may be empty). */
export const checkDescription = (issues: Issues, description: string): string =>
  issues.text("description", description, { min: 0, max: LIMITS.descriptionChars, lines: true });

/** The name and description changes an update asks for, checked into `issues`. */
export function metadataChanges(issues: Issues, input: { name?: string; description?: string }): Partial<ResourceDoc> {
  const set: Partial<ResourceDoc> = {};
  if (input.name !== undefined) set.name = issues.text("name", input.name);
  if (input.description !== undefined) set.description = checkDescription(issues, input.description);
  return set;
}

export function versionedResource<P extends ResourceDoc, V extends VersionDoc>(
  deps: CatalogDeps,
  family: VersionedFamily<P, V>,
) {
  return {
    /** The resource `id`, once the caller holds `scope` on its organization. */
    async parentFor(principal: Principal, id: string, scope: Scope): Promise<P> {
      if (id === "") throw invalidArgument("id is required", [{ field: "id", issue: "is required" }]);
      const parent = await family.parents.findOne({ _id: id });
      if (!parent) throw notFound(family.noun);
      await deps.access.onResource(principal, parent.organizationId, scope, family.noun);
      return parent;
    },

    /** Summaries of one resource's versions, in version order. */
    versionsOf(parentId: string): Promise<V[]> {
      return versionSummaries(family.versions, { [family.parentField]: parentId });
    },

    /** One page of an organization's resources, each with its version summaries. */
    async page(
      principal: Principal,
      input: { organizationId: string; limit: number; cursor: string },
      scope: Scope,
    ): Promise<{ items: { parent: P; versions: V[] }[]; nextCursor: string }> {
      await deps.access.inOrganization(principal, input.organizationId, scope);
      const page = await findPage(family.parents, { organizationId: input.organizationId }, input);
      const ids = page.items.map((p) => p._id);
      const versions =
        ids.length > 0 ? await versionSummaries(family.versions, { [family.parentField]: { $in: ids } }) : [];
      return {
        items: page.items.map((parent) => ({
          parent,
          versions: versions.filter((v) => family.parentOf(v) === parent._id),
        })),
        nextCursor: page.nextCursor,
      };
    },

    /** Applies `set` (unless empty) with a new updatedAt; the resource as it is now. */
    async applyChanges(parent: P, set: Partial<P>): Promise<P> {
      if (Object.keys(set).length === 0) return parent;
      return (
        (await family.parents.findOneAndUpdate({ _id: parent._id }, { $set: { ...set, updatedAt: deps.now() } })) ??
        parent
      );
    },

    /** Marks the resource changed at `at` (a version was added or published). */
    async touch(parentId: string, at: Date): Promise<void> {
      await family.parents.updateOne({ _id: parentId }, { $set: { updatedAt: at } });
    },
  };
}
