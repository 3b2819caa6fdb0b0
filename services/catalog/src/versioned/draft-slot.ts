/**
 * One draft per resource, for the families whose versions are edited in place (skills, agents):
 * a slot document keyed by the resource id, taken by an insert, so the rule holds under
 * concurrency on every backend.
 */
import { DomainError, failedPrecondition } from "@kiln/kit/errors";
import { type Collection, isDuplicateKeyError } from "@kiln/kit/store";
import type { CatalogDeps } from "../catalog-deps.js";
import type { VersionStatus } from "../store/catalog-store.js";

/** A draft slot whose version never appeared is taken over after this long (a crashed creation). */
const ORPHAN_SLOT_MS = 60_000;

export interface DraftSlots {
  /** "skill" or "agent", as errors name it. */
  noun: string;
  slots: Collection<{ _id: string; versionId: string; createdAt: Date }>;
  versions: Collection<{ _id: string; status: VersionStatus }>;
}

/**
 * Takes the resource's one draft slot for `versionId`. A slot whose version was published (publish
 * releases it right after) or never appeared (a creation that crashed) is taken over.
 */
export async function claimDraftSlot(
  deps: CatalogDeps,
  family: DraftSlots,
  parentId: string,
  versionId: string,
): Promise<void> {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      await family.slots.insertOne({ _id: parentId, versionId, createdAt: deps.now() });
      return;
    } catch (e) {
      if (!isDuplicateKeyError(e)) throw e;
    }
    const slot = await family.slots.findOne({ _id: parentId });
    if (!slot) continue;
    const holder = await family.versions.findOne({ _id: slot.versionId });
    const stale = holder
      ? holder.status === "published"
      : deps.now().getTime() - slot.createdAt.getTime() > ORPHAN_SLOT_MS;
    if (!stale) {
      throw failedPrecondition(
        `${family.noun} already has a draft version (${slot.versionId}); publish it or edit it`,
        [{ field: "draftVersionId", issue: slot.versionId }],
      );
    }
    await family.slots.deleteOne({ _id: parentId, versionId: slot.versionId });
  }
  throw new DomainError("unavailable", `the ${family.noun}'s draft changed concurrently; retry`);
}
