/**
 * Diffs of two versions of one resource, for every versioned family (api.md "Version diffs"): the
 * family only says how a version reads as a document.
 */
import { invalidArgument, notFound } from "@kiln/kit/errors";
import type { Collection } from "@kiln/kit/store";
import type { JsonObject } from "../domain/json-schema.js";
import { type DocumentDiff, diffDocuments } from "../domain/version-diff.js";

/** A version diff as the RPCs answer it; `from` null: against nothing. */
export interface VersionDiffView extends DocumentDiff {
  from: { versionId: string; version: number } | null;
  to: { versionId: string; version: number };
}

export function versionIdRequired(versionId: string): void {
  if (versionId === "") throw invalidArgument("versionId is required", [{ field: "versionId", issue: "is required" }]);
}

/** Where a family's versions are and how one reads as a diffable document. */
export interface DiffableVersions<V extends { _id: string; version: number }> {
  versions: Collection<V>;
  parentField: string;
  /** The noun not-found errors name, e.g. "prompt version". */
  noun: string;
  document: (version: V) => JsonObject;
}

/**
 * `versionId` against `againstVersionId`, or against the version before it when that is empty
 * (against nothing for version 1).
 */
export async function diffVersions<V extends { _id: string; version: number }>(
  family: DiffableVersions<V>,
  parentId: string,
  input: { versionId: string; againstVersionId: string },
): Promise<VersionDiffView> {
  versionIdRequired(input.versionId);
  const ofParent = { [family.parentField]: parentId };
  const to = await family.versions.findOne({ _id: input.versionId, ...ofParent });
  if (!to) throw notFound(family.noun);
  let from: V | null = null;
  if (input.againstVersionId !== "") {
    from = await family.versions.findOne({ _id: input.againstVersionId, ...ofParent });
    if (!from) throw notFound(family.noun);
  } else if (to.version > 1) {
    from = await family.versions.findOne({ ...ofParent, version: to.version - 1 });
  }
  const diff = diffDocuments(from ? family.document(from) : null, family.document(to));
  return {
    from: from ? { versionId: from._id, version: from.version } : null,
    to: { versionId: to._id, version: to.version },
    ...diff,
  };
}
