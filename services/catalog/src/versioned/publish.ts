/**
 * The steps every family's publish and create share, written once. Publish, once the family has
 * made its own checks: find the live version before, mark the draft published (a lost race is
 * refused), forget the cached live version, release the draft slot, touch the resource and record
 * the move of production. Create: the resource with its first version, the version first so a
 * visible resource always has one.
 */
import type { DomainError } from "@kiln/kit/errors";
import type { Principal } from "@kiln/kit/principal";
import type { Collection, Filter } from "@kiln/kit/store";
import type { CatalogDeps } from "../catalog-deps.js";
import { livePublishedVersion, type VersionLike } from "../domain/versions.js";
import type { LabelKind } from "../store/catalog-store.js";
import type { SlotCollection } from "./families.js";
import { recordPublish } from "./label-moves.js";
import { alreadyPublished } from "./resource.js";

/** How one family publishes. */
export interface PublishingFamily<V extends VersionLike> {
  kind: LabelKind;
  versions: Collection<V>;
  /** The resource's versions (summaries are enough to find the live one). */
  versionsOf: (parentId: string) => Promise<V[]>;
  touch: (parentId: string, at: Date) => Promise<void>;
  /** Forgets the resource's cached live version, for the families the live cache holds. */
  forgetLive?: (parentId: string) => void;
  /**
   * The one-draft slots of the families whose drafts are edited in place (skills, agents): their
   * versions carry `updatedAt`, stamped on publish, and publishing releases the slot.
   */
  draftSlots?: SlotCollection;
}

/** What a family adds to the commit: a stricter filter, more fields, its own lost-race error. */
export interface PublishChange {
  filter?: Filter;
  set?: Record<string, unknown>;
  /** The error when the draft was no longer as read; default: already published. */
  lost?: () => Promise<DomainError>;
}

/** Publishes `version` of `parent` (checked by the family); the time it was published at. */
export async function commitPublish<V extends VersionLike>(
  deps: CatalogDeps,
  principal: Principal,
  family: PublishingFamily<V>,
  parent: { _id: string; organizationId: string },
  version: V,
  change: PublishChange = {},
): Promise<Date> {
  const before = livePublishedVersion(await family.versionsOf(parent._id));
  const at = deps.now();
  const stamp = family.draftSlots ? { updatedAt: at } : {};
  const published = await family.versions.findOneAndUpdate(
    { _id: version._id, status: "draft", ...change.filter },
    { $set: { status: "published", ...change.set, publishedAt: at, ...stamp } },
  );
  if (!published) throw change.lost ? await change.lost() : alreadyPublished(family.kind, version);
  // Runs resolved by this replica see the new version from now on (live-version-cache.ts).
  family.forgetLive?.(parent._id);
  await family.draftSlots?.deleteOne({ _id: parent._id, versionId: version._id });
  await family.touch(parent._id, at);
  await recordPublish(deps, principal, family.kind, parent, version, before, at);
  return at;
}

/** Stores a new resource with its first version (and its draft slot, for families with one). */
export async function insertWithFirstVersion<P extends { _id: string }, V extends { _id: string }>(
  family: { parents: Collection<P>; versions: Collection<V>; draftSlots?: SlotCollection },
  parent: P,
  version: V,
  at: Date,
): Promise<void> {
  // Version and slot first: a visible resource always has its version.
  await family.versions.insertOne(version);
  await family.draftSlots?.insertOne({ _id: parent._id, versionId: version._id, createdAt: at });
  await family.parents.insertOne(parent);
}
