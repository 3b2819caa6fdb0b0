/**
 * The use cases of the families whose versions are published (prompts, skills, agents), around a
 * family's view of one resource (the resource, its versions and the version it describes): get,
 * list and update answering that view, and publish's steps (find the version, commit, answer the
 * view) around the family's own checks. drafts.ts adds what the one-draft families share.
 */
import { PRODUCTION } from "@kiln/contracts/labels";
import { failedPrecondition, notFound } from "@kiln/kit/errors";
import type { Principal } from "@kiln/kit/principal";
import type { Filter } from "@kiln/kit/store";
import type { CatalogDeps } from "../catalog-deps.js";
import type { Issues } from "../domain/issues.js";
import type { DraftedVersionDoc, LabelKind, ResourceDoc } from "../store/catalog-store.js";
import { versionIdRequired } from "./diff.js";
import type { FamilyStore } from "./families.js";
import { commitPublish, type PublishChange, type PublishingFamily } from "./publish.js";
import { alreadyPublished, versionedResource } from "./resource.js";
import { wholeVersion, wholeVersions } from "./version-store.js";

/** How a family answers: its view of a resource and the view's field holding the version described. */
export interface FamilyView<P, V, W, K extends string> {
  view: (parent: P, versions: V[], versionId?: string) => W;
  /** Read whole for the answer (the versions are read as summaries). */
  described: K;
}

export type PublishedFamily<P extends ResourceDoc, V extends DraftedVersionDoc> = FamilyStore<P, V> & {
  noun: LabelKind;
};

export type PublishedCases<
  P extends ResourceDoc,
  V extends DraftedVersionDoc,
  K extends string,
  W extends { [key in K]: V | null },
> = ReturnType<typeof publishedCases<P, V, K, W>>;

export function publishedCases<
  P extends ResourceDoc,
  V extends DraftedVersionDoc,
  K extends string,
  W extends { [key in K]: V | null },
>(deps: CatalogDeps, family: PublishedFamily<P, V>, answer: FamilyView<P, V, W, K>) {
  const resource = versionedResource(deps, family);
  const noun = family.noun;
  const whole = (view: W) => wholeVersion(family.versions, view, answer.described);
  /** The view of `parent` as it is now, describing `versionId` (default: the family's choice). */
  const viewOf = async (parent: P, versionId = "") =>
    whole(answer.view(parent, await resource.versionsOf(parent._id), versionId));
  const ofParent = (parent: P) => ({ [family.parentField]: parent._id });
  const publishing: PublishingFamily<V> = {
    kind: noun,
    versions: family.versions,
    versionsOf: resource.versionsOf,
    touch: resource.touch,
    forgetLive: family.forgetLive,
    draftSlots: family.draftSlots,
  };

  /** The version `versionId` of `parent`, or not found. */
  async function versionOf(parent: P, versionId: string): Promise<V> {
    const version = await family.versions.findOne({ _id: versionId, ...ofParent(parent) });
    if (!version) throw notFound(`${noun} version`);
    return version;
  }

  /** The draft of a one-draft family, or failed_precondition. */
  async function draftOf(parent: P): Promise<V> {
    const draft = await family.versions.findOne({ ...ofParent(parent), status: "draft" });
    if (draft) return draft;
    throw failedPrecondition(`the ${noun} has no draft version to publish`, [
      { field: "versionId", issue: "no draft exists" },
    ]);
  }

  return {
    resource,
    /** The family's view of a resource with these versions (as they are). */
    view: answer.view,
    viewOf,
    versionOf,

    async get(principal: Principal, input: { id: string; versionId: string }): Promise<W> {
      return viewOf(await resource.parentFor(principal, input.id, family.read), input.versionId);
    },

    async list(
      principal: Principal,
      input: { organizationId: string; limit: number; cursor: string; name?: string; where?: Filter },
    ) {
      const page = await resource.page(principal, input);
      const views = page.items.map(({ parent, versions }) => answer.view(parent, versions));
      return { items: await wholeVersions(family.versions, views, answer.described), nextCursor: page.nextCursor };
    },

    async update(
      principal: Principal,
      input: { id: string; name?: string; description?: string },
      more?: (issues: Issues) => Partial<P>,
    ): Promise<W> {
      return viewOf(await resource.update(principal, input, more));
    },

    /**
     * The version a publish of `versionId` (a one-draft family's default: its draft) of the
     * resource `parentId` would publish, once the caller may move production (publishing moves
     * it, docs/labels.md). A published one is refused.
     */
    async toPublish(principal: Principal, parentId: string, versionId: string): Promise<{ parent: P; version: V }> {
      const parent = await resource.parentFor(principal, parentId, family.write);
      if (!family.draftSlots) versionIdRequired(versionId);
      await deps.access.moveLabel(principal, parent.organizationId, family.write, noun, PRODUCTION);
      const version = versionId === "" ? await draftOf(parent) : await versionOf(parent, versionId);
      if (version.status === "published") throw alreadyPublished(noun, version);
      return { parent, version };
    },

    /** Publishes `version` (checked by the family); the view as it is now. */
    async publish(principal: Principal, parent: P, version: V, change?: PublishChange): Promise<W> {
      const at = await commitPublish(deps, principal, publishing, parent, version, change);
      return viewOf({ ...parent, updatedAt: at });
    },
  };
}
