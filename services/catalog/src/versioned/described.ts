/**
 * Which version a view of a draft-edited resource (skills, agents) describes: the one asked for,
 * else the draft, else the live published one, else the latest.
 */
import { notFound } from "@kiln/kit/errors";
import { byVersionAscending, latestVersion, livePublishedVersion, type VersionLike } from "../domain/versions.js";

/** A resource's versions (oldest first), its draft and live ones, and the version described. */
export interface DescribedVersions<V extends VersionLike> {
  versions: V[];
  draftVersionId: string | null;
  publishedVersionId: string | null;
  /** The version asked for, else the draft, else the live published one. */
  described: V;
}

export function describeVersions<V extends VersionLike>(
  noun: string,
  parentId: string,
  versions: readonly V[],
  versionId: string,
): DescribedVersions<V> {
  const sorted = [...versions].sort(byVersionAscending);
  const draft = sorted.find((v) => v.status === "draft");
  const published = livePublishedVersion(sorted);
  let described = draft ?? published ?? latestVersion(sorted);
  if (versionId !== "") {
    described = sorted.find((v) => v._id === versionId);
    if (!described) throw notFound(`${noun} version`);
  }
  // Every skill and agent is created with version 1.
  if (!described) throw new Error(`${noun} ${parentId} has no version`);
  return {
    versions: sorted,
    draftVersionId: draft?._id ?? null,
    publishedVersionId: published?._id ?? null,
    described,
  };
}
