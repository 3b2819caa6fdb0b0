/**
 * Moves of labels as every versioned family records them: publishing a version moves
 * `production` (docs/labels.md), and each move is kept in `label_moves`.
 */

import { PRODUCTION } from "@kiln/contracts/labels";
import { newId } from "@kiln/kit/ids";
import type { Principal } from "@kiln/kit/principal";
import type { CatalogDeps } from "../catalog-deps.js";
import type { LabelKind, LabelMoveDoc } from "../store/catalog-store.js";

export const labelId = (kind: LabelKind, parentId: string, label: string) => `${kind}/${parentId}/${label}`;

/**
 * Records one move of a label; the publish use cases call it for `production`. A failure to
 * record is not the move's failure (the move already happened): it is thrown to the caller, who
 * retries a request whose answer it did not get.
 */
export async function recordLabelMove(
  deps: CatalogDeps,
  move: Omit<LabelMoveDoc, "_id" | "at"> & { at?: Date },
): Promise<LabelMoveDoc> {
  const doc = labelMoveDoc({ ...move, at: move.at ?? deps.now() });
  await deps.collections.labelMoves.insertOne(doc);
  await deps.events.labelMoved(doc);
  return doc;
}

/** A move of a label as it is kept, with a new id. */
export const labelMoveDoc = (move: Omit<LabelMoveDoc, "_id">): LabelMoveDoc => ({ _id: newId("lbm"), ...move });

/**
 * Records that publishing `version` (or promoting it, `action` "moved") moved production from
 * `before` (the live version until then).
 */
export async function recordPublish(
  deps: CatalogDeps,
  principal: Principal,
  kind: LabelKind,
  parent: { _id: string; organizationId: string },
  version: { _id: string; version: number },
  before: { _id: string } | undefined,
  at: Date,
  action: "published" | "moved" = "published",
): Promise<void> {
  await recordLabelMove(deps, {
    organizationId: parent.organizationId,
    kind,
    parentId: parent._id,
    label: PRODUCTION,
    versionId: version._id,
    version: version.version,
    previousVersionId: before?._id ?? null,
    action,
    at,
    by: actorOf(principal),
  });
}

/** The principal's id as labels record it ("" for the platform's own services). */
export const actorOf = (principal: Principal) => (principal.type === "service" ? "" : principal.id);
