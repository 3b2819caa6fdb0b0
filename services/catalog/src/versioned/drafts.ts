/**
 * What the families with one draft edited in place (skills, agents) share: a new resource starts
 * with an empty draft version 1, and a new draft copies a version's content (at most one draft
 * per resource, draft-slot.ts). A family says what its versions hold.
 */
import { notFound } from "@kiln/kit/errors";
import { newId } from "@kiln/kit/ids";
import type { Principal } from "@kiln/kit/principal";
import type { CatalogDeps } from "../catalog-deps.js";
import type { DraftedVersionDoc, ResourceDoc } from "../store/catalog-store.js";
import { claimDraftSlot } from "./draft-slot.js";
import type { FamilyStore, SlotCollection } from "./families.js";
import { insertWithFirstVersion } from "./publish.js";
import { authorOf, type VersionedResource, type VersionHead } from "./resource.js";

/** The head of a version of a one-draft family. */
export type DraftHead = DraftedVersionDoc & { updatedAt: Date };

/** What a family's versions hold (`C`) and how a version document is made of it. */
export interface DraftContent<P, V, C> {
  /** A new resource's first draft. */
  empty: C;
  /** What a new draft copies from a version. */
  of: (version: V) => C;
  version: (parent: P, head: DraftHead, content: C) => V;
  /** A new resource document from the fields every resource starts with. */
  parent: (base: ResourceDoc) => P;
}

export function draftCases<P extends ResourceDoc, V extends DraftedVersionDoc, C, W>(
  deps: CatalogDeps,
  family: FamilyStore<P, V> & { draftSlots: SlotCollection },
  cases: { resource: VersionedResource<P, V>; view: (parent: P, versions: V[]) => W },
  content: DraftContent<P, V, C>,
) {
  const resource = cases.resource;
  const draftHead = (head: VersionHead): DraftHead => ({
    ...head,
    status: "draft",
    updatedAt: head.createdAt,
    publishedAt: null,
  });

  return {
    /** A resource with an empty draft version 1; the family's view of it. */
    async create(
      principal: Principal,
      input: { organizationId: string; name: string; description: string },
    ): Promise<W> {
      const parent = content.parent(await resource.newParent(principal, input));
      const at = parent.updatedAt;
      const head = {
        _id: newId(family.ids.version),
        organizationId: parent.organizationId,
        version: 1,
        createdAt: at,
        createdBy: authorOf(principal),
      };
      const version = content.version(parent, draftHead(head), content.empty);
      await insertWithFirstVersion(family, parent, version, at);
      return cases.view(parent, [version]);
    },

    /** A new draft copied from `fromVersionId` (default: the latest); at most one draft per resource. */
    async newDraft(principal: Principal, parentId: string, fromVersionId: string): Promise<V> {
      const parent = await resource.parentFor(principal, parentId, family.write);
      const ofParent = { [family.parentField]: parent._id };
      const source =
        fromVersionId === ""
          ? await family.versions.findOne(ofParent, { sort: { version: -1 } })
          : await family.versions.findOne({ _id: fromVersionId, ...ofParent });
      if (!source) throw notFound(`${family.noun} version`);
      const id = newId(family.ids.version);
      await claimDraftSlot(
        deps,
        { noun: family.noun, slots: family.draftSlots, versions: family.versions },
        parent._id,
        id,
      );
      try {
        return await resource.insertVersion(
          principal,
          parent,
          (head) => content.version(parent, draftHead(head), content.of(source)),
          { id },
        );
      } catch (e) {
        await family.draftSlots.deleteOne({ _id: parent._id, versionId: id });
        throw e;
      }
    },
  };
}
