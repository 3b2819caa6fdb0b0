import { LATEST, PRODUCTION } from "@kiln/contracts/labels";
import { livePublishedVersion } from "../../domain/versions.js";
import type { LabelDoc, LabelKind } from "../../store/catalog-store.js";
import { labelId } from "../../versioned/label-moves.js";
import { toDate, type Versioned } from "../shared.js";
import type { PlanContext } from "./context.js";

/** The label moves and publishes an import plans for a thing that is here already (or new). */
export function labelPlanner(ctx: PlanContext) {
  const { c, p, organizationId, at, actor, insert, planMove } = ctx;
  /** Labels other than production: new ones inserted, moved ones replaced, each move recorded. */
  async function planLabels(
    kind: LabelKind,
    parentId: string,
    labels: Record<string, number>,
    versionIdOf: (version: number) => string | undefined,
    isNew: boolean,
  ): Promise<number> {
    let moves = 0;
    for (const [label, number] of Object.entries(labels)) {
      if (label === PRODUCTION || label === LATEST) continue;
      const versionId = versionIdOf(number);
      if (!versionId) continue;
      const _id = labelId(kind, parentId, label);
      const before = isNew ? null : await c.labels.findOne({ _id });
      if (before?.versionId === versionId) continue;
      const doc: LabelDoc = {
        _id,
        organizationId,
        kind,
        parentId,
        label,
        versionId,
        updatedAt: at,
        updatedBy: actor,
      };
      if (before)
        p.updates.push({
          collection: "labels",
          doc: doc as unknown as LabelDoc & Record<string, unknown>,
          before: before as unknown as Record<string, unknown>,
        });
      else insert("labels", doc);
      p.movedLabels.add(label);
      planMove({
        organizationId,
        kind,
        parentId,
        label,
        versionId,
        version: number,
        previousVersionId: before?.versionId ?? null,
        action: "moved",
        at,
        by: actor,
      });
      moves++;
    }
    return moves;
  }

  /** Publishes drafts here that the bundle has published; returns how many. */
  function planPublishes<
    V extends { _id: string; status: "draft" | "published"; publishedAt: Date | null; version: number },
  >(
    kind: LabelKind,
    collection: "promptVersions" | "skillVersions" | "agentVersions",
    parentId: string,
    kept: Map<number, V>,
    versions: readonly Versioned[],
    allHere: readonly V[],
  ): number {
    let published = 0;
    for (const v of versions) {
      const here = kept.get(v.version);
      if (here?.status !== "draft" || v.status !== "published") continue;
      const publishedAt = toDate(v.publishedAt) ?? at;
      const before = livePublishedVersion(allHere);
      p.updates.push({
        collection,
        doc: { ...here, status: "published", publishedAt } as unknown as V & Record<string, unknown>,
        before: here as unknown as Record<string, unknown>,
      });
      p.movedLabels.add(PRODUCTION);
      planMove({
        organizationId,
        kind,
        parentId,
        label: PRODUCTION,
        versionId: here._id,
        version: here.version,
        previousVersionId: before?._id ?? null,
        action: "published",
        at: publishedAt,
        by: actor,
      });
      published++;
    }
    return published;
  }

  return { planLabels, planPublishes };
}
