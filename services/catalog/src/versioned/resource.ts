/**
 * The lifecycle every versioned family shares (prompts, tools, skills, agents): find a resource
 * the caller may use, start a new one, list a page of them with their versions, change name and
 * description, number and insert a new version, diff two versions. A family configures it with its
 * row of families.ts and keeps only what its versions hold.
 */
import { type DomainError, failedPrecondition, invalidArgument, notFound } from "@kiln/kit/errors";
import { newId } from "@kiln/kit/ids";
import { LIMITS } from "@kiln/kit/limits";
import { findPage } from "@kiln/kit/pagination";
import type { Principal } from "@kiln/kit/principal";
import type { Filter } from "@kiln/kit/store";
import type { Scope } from "../access.js";
import type { CatalogDeps } from "../catalog-deps.js";
import { Issues } from "../domain/issues.js";
import type { JsonObject } from "../domain/json-schema.js";
import type { Author, ResourceDoc, VersionDoc } from "../store/catalog-store.js";
import { diffVersions, type VersionDiffView } from "./diff.js";
import type { FamilyStore } from "./families.js";
import { insertNextVersion, versionSummaries } from "./version-store.js";

/** What every new version starts with; the family adds its resource field and content. */
export type VersionHead = VersionDoc;

/** Who a version's author is: the caller. */
export const authorOf = (principal: Principal): Author => ({ type: principal.type, id: principal.id });

/** Checks a new version's change message (multi-line, may be empty: none). */
export const checkChangeMessage = (issues: Issues, message: string): string | null =>
  issues.text("message", message, { min: 0, max: LIMITS.changeMessageChars, lines: true }) || null;

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

export type VersionedResource<P extends ResourceDoc, V extends VersionDoc> = ReturnType<typeof versionedResource<P, V>>;

export function versionedResource<P extends ResourceDoc, V extends VersionDoc>(
  deps: CatalogDeps,
  family: FamilyStore<P, V>,
) {
  /** The resource `id`, once the caller holds `scope` on its organization. */
  async function parentFor(principal: Principal, id: string, scope: Scope): Promise<P> {
    if (id === "") throw invalidArgument("id is required", [{ field: "id", issue: "is required" }]);
    const parent = await family.parents.findOne({ _id: id });
    if (!parent) throw notFound(family.noun);
    await deps.access.onResource(principal, parent.organizationId, scope, family.noun);
    return parent;
  }

  /** Marks the resource changed at `at` (a version was added or published). */
  async function touch(parentId: string, at: Date): Promise<void> {
    await family.parents.updateOne({ _id: parentId }, { $set: { updatedAt: at } });
  }

  return {
    parentFor,
    touch,

    /** Summaries of one resource's versions, in version order. */
    versionsOf(parentId: string): Promise<V[]> {
      return versionSummaries(family.versions, { [family.parentField]: parentId });
    },

    /**
     * Checks a new resource's name and description (and what `more` checks) in `organizationId`,
     * where the caller must hold the write scope; the fields every resource starts with. `issues`
     * may hold what the family checked first.
     */
    async newParent(
      principal: Principal,
      input: { organizationId: string; name: string; description: string },
      more?: (issues: Issues) => void,
      issues = new Issues(),
    ): Promise<ResourceDoc> {
      await deps.access.inOrganization(principal, input.organizationId, family.write);
      const name = issues.text("name", input.name);
      const description = checkDescription(issues, input.description);
      more?.(issues);
      issues.throwIfAny();
      const at = deps.now();
      const _id = newId(family.ids.parent);
      return { _id, organizationId: input.organizationId, name, description, createdAt: at, updatedAt: at };
    },

    /**
     * One page of an organization's resources, each with its version summaries; only those named
     * `name` when it is given (an indexed lookup: organizationId, name, _id), and matching `where`
     * (a condition on other fields than the organization, e.g. a prompt folder's names).
     */
    async page(
      principal: Principal,
      input: { organizationId: string; limit: number; cursor: string; name?: string; where?: Filter },
    ): Promise<{ items: { parent: P; versions: V[] }[]; nextCursor: string }> {
      await deps.access.inOrganization(principal, input.organizationId, family.read);
      const named = input.name ? { name: input.name } : {};
      const filter = { ...input.where, organizationId: input.organizationId, ...named };
      const page = await findPage(family.parents, filter, input);
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

    /**
     * Changes name and description (and what `more` checks and sets) with a new updatedAt, and
     * forgets the cached live version; the resource as it is now.
     */
    async update(
      principal: Principal,
      input: { id: string; name?: string; description?: string },
      more?: (issues: Issues) => Partial<P>,
    ): Promise<P> {
      const parent = await parentFor(principal, input.id, family.write);
      const issues = new Issues();
      const set = { ...metadataChanges(issues, input), ...more?.(issues) };
      issues.throwIfAny();
      const updated =
        Object.keys(set).length === 0
          ? parent
          : ((await family.parents.findOneAndUpdate(
              { _id: parent._id },
              { $set: { ...set, updatedAt: deps.now() } },
            )) ?? parent);
      family.forgetLive?.(parent._id);
      return updated;
    },

    /**
     * Inserts the next version of `parent` (as `build` makes it from its head, authored by
     * `principal` with the change `message`) and touches it.
     */
    async insertVersion(
      principal: Principal,
      parent: P,
      build: (head: VersionHead) => V,
      options: { id?: string; message?: string | null } = {},
    ): Promise<V> {
      const at = deps.now();
      const id = options.id ?? newId(family.ids.version);
      const head = { _id: id, organizationId: parent.organizationId, createdAt: at, createdBy: authorOf(principal) };
      const version = await insertNextVersion(family.versions, { [family.parentField]: parent._id }, (n) =>
        build({ ...head, version: n, message: options.message ?? null }),
      );
      await touch(parent._id, at);
      return version;
    },

    /** `versionId` against another version of the resource `parentId` (api.md "Version diffs"). */
    async diff(
      principal: Principal,
      input: { parentId: string; versionId: string; againstVersionId: string },
      document: (version: V) => JsonObject,
    ): Promise<VersionDiffView> {
      const parent = await parentFor(principal, input.parentId, family.read);
      const versions = { versions: family.versions, parentField: family.parentField, document };
      return diffVersions({ ...versions, noun: `${family.noun} version` }, parent._id, input);
    },
  };
}
