/**
 * Reading labels (docs/labels.md): every label of one parent, or of many parents of one family at
 * once. Both answer the same labels from the same three things: the parent's version summaries
 * (production is the live published version, latest the newest), its stored labels, and who moved
 * production to the live version (the last production move, when it points there); each label's
 * response-cache default is the parent's (label-cache-ttl.ts). One parent costs three store
 * queries; many cost at most four, whatever their number.
 */
import { LATEST, PRODUCTION } from "@kiln/contracts/labels";
import { invalidArgument } from "@kiln/kit/errors";
import type { CatalogDeps } from "./catalog-deps.js";
import { latestVersion, livePublishedVersion } from "./domain/versions.js";
import { labelTtlOf } from "./label-cache-ttl.js";
import { type LabelView, labelView } from "./label-view.js";
import type { LabelDoc, LabelKind, LabelMoveDoc } from "./store/catalog-store.js";
import type { AnyParent, AnyVersion, LabelledFamily } from "./versioned/labelled-families.js";
import { versionSummaries } from "./versioned/version-store.js";

/** How many parents one call may ask the labels of. */
export const MAX_LABEL_PARENTS = 100;

/** Checks the parents a call asks the labels of (`parentIds`, distinct) besides `parentId`. */
export function checkParentIds(parentId: string, parentIds: readonly string[]): void {
  const issue =
    parentId !== ""
      ? "cannot be given with parentId"
      : parentIds.length > MAX_LABEL_PARENTS
        ? `holds at most ${MAX_LABEL_PARENTS} ids`
        : parentIds.includes("")
          ? "must not hold an empty id"
          : undefined;
  if (issue) throw invalidArgument(`parentIds ${issue}`, [{ field: "parentIds", issue }]);
}

/** What the labels of one parent are derived from. */
interface LabelSources {
  versions: AnyVersion[];
  stored: LabelDoc[];
  /** Who moved production to the live version; "" when unknown. */
  productionBy: string;
}

/** Every label of one parent: production and latest first (when they exist), then by name. */
function labelsFrom(
  kind: LabelKind,
  parent: AnyParent,
  { versions, stored, productionBy }: LabelSources,
  protectedLabels: readonly string[],
): LabelView[] {
  const parentId = parent._id;
  const byId = new Map(versions.map((v) => [v._id, v]));
  const out: LabelView[] = [];
  const view = (label: string, version: AnyVersion, at: Date, by: string) =>
    labelView(kind, parentId, label, version, at, by, protectedLabels, labelTtlOf(parent, label));
  const live = livePublishedVersion(versions);
  if (live?.publishedAt) out.push(view(PRODUCTION, live, live.publishedAt, productionBy));
  const latest = latestVersion(versions);
  if (latest) out.push(view(LATEST, latest, latest.createdAt, ""));
  for (const doc of [...stored].sort((a, b) => a.label.localeCompare(b.label))) {
    const version = byId.get(doc.versionId);
    if (version) out.push(view(doc.label, version, doc.updatedAt, doc.updatedBy));
  }
  return out;
}

/** `items` grouped by `keyOf`, every key of `keys` present (in their order). */
function groupBy<T>(keys: readonly string[], items: readonly T[], keyOf: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>(keys.map((k) => [k, []]));
  for (const item of items) groups.get(keyOf(item))?.push(item);
  return groups;
}

export function labelReads(deps: CatalogDeps) {
  const c = deps.collections;

  /** Every label of one parent (three store queries). */
  async function labelsOf(
    kind: LabelKind,
    family: LabelledFamily,
    parent: AnyParent,
    protectedLabels: readonly string[],
  ): Promise<LabelView[]> {
    const parentId = parent._id;
    const [versions, stored, [productionMove]] = await Promise.all([
      versionSummaries(family.versions, { [family.parentField]: parentId }),
      c.labels.find({ kind, parentId }),
      c.labelMoves.find({ kind, parentId, label: PRODUCTION }, { sort: { _id: -1 }, limit: 1 }),
    ]);
    const live = livePublishedVersion(versions);
    const productionBy = live && productionMove?.versionId === live._id ? productionMove.by : "";
    return labelsFrom(kind, parent, { versions, stored, productionBy }, protectedLabels);
  }

  /**
   * Who moved production to each parent's live version: the last production move of the parent,
   * when it points there. Read as the newest move to each live version, then whether any
   * production move of that parent came after it (two queries for all the parents, each reading
   * the parents' keys of the moves index).
   */
  async function productionMovers(kind: LabelKind, live: Map<string, AnyVersion>): Promise<Map<string, string>> {
    if (live.size === 0) return new Map();
    const newestFirst = (a: { _id: string }, b: { _id: string }) => (a._id < b._id ? 1 : a._id > b._id ? -1 : 0);
    const toLive = await c.labelMoves.find({
      kind,
      parentId: { $in: [...live.keys()] },
      label: PRODUCTION,
      versionId: { $in: [...live.values()].map((v) => v._id) },
    });
    const movers = new Map<string, LabelMoveDoc>();
    for (const move of toLive.sort(newestFirst)) {
      if (move.versionId === live.get(move.parentId)?._id && !movers.has(move.parentId))
        movers.set(move.parentId, move);
    }
    if (movers.size > 0) {
      const oldest = [...movers.values()].reduce((a, b) => (a._id < b._id ? a : b))._id;
      const later = await c.labelMoves.find({
        kind,
        parentId: { $in: [...movers.keys()] },
        label: PRODUCTION,
        _id: { $gt: oldest },
      });
      for (const move of later)
        if (move._id > (movers.get(move.parentId)?._id ?? move._id)) movers.delete(move.parentId);
    }
    return new Map([...movers].map(([parentId, move]) => [parentId, move.by]));
  }

  /**
   * Every label of each of `parents` (of one family, read by the caller), as `labelsOf` answers
   * one of them, in at most four store queries.
   */
  async function labelsOfMany(
    kind: LabelKind,
    family: LabelledFamily,
    parents: readonly AnyParent[],
    protectedLabels: readonly string[],
  ): Promise<Map<string, LabelView[]>> {
    if (parents.length === 0) return new Map();
    const parentIds = parents.map((p) => p._id);
    const parentOf = (v: AnyVersion) => (v as unknown as Record<string, string>)[family.parentField] ?? "";
    const [versions, stored] = await Promise.all([
      versionSummaries(family.versions, { [family.parentField]: { $in: [...parentIds] } }),
      c.labels.find({ kind, parentId: { $in: [...parentIds] } }),
    ]);
    const versionsOf = groupBy(parentIds, versions, parentOf);
    const storedOf = groupBy(parentIds, stored, (l) => l.parentId);
    const live = new Map<string, AnyVersion>();
    for (const [parentId, its] of versionsOf) {
      const version = livePublishedVersion(its);
      if (version?.publishedAt) live.set(parentId, version);
    }
    const movers = await productionMovers(kind, live);
    return new Map(
      parents.map((parent) => [
        parent._id,
        labelsFrom(
          kind,
          parent,
          {
            versions: versionsOf.get(parent._id) ?? [],
            stored: storedOf.get(parent._id) ?? [],
            productionBy: movers.get(parent._id) ?? "",
          },
          protectedLabels,
        ),
      ]),
    );
  }

  return { labelsOf, labelsOfMany };
}
