/**
 * A label as the label RPCs answer it: where it points, who moved it last, what may move it, and
 * its response-cache default.
 */
import { LATEST } from "@kiln/contracts/labels";
import type { LabelKind } from "./store/catalog-store.js";
import type { AnyVersion } from "./versioned/labelled-families.js";

export interface LabelView {
  kind: LabelKind;
  parentId: string;
  label: string;
  versionId: string;
  version: number;
  updatedAt: Date;
  updatedBy: string;
  readOnly: boolean;
  protected: boolean;
  /** A prompt label's response-cache default (docs/cache.md "Defaults"); absent: none. */
  cacheTtlSeconds?: number;
}

export function labelView(
  kind: LabelKind,
  parentId: string,
  label: string,
  version: AnyVersion,
  at: Date,
  by: string,
  protectedLabels: readonly string[],
  cacheTtlSeconds?: number,
): LabelView {
  return {
    kind,
    parentId,
    label,
    versionId: version._id,
    version: version.version,
    updatedAt: at,
    updatedBy: by,
    readOnly: label === LATEST,
    protected: protectedLabels.includes(label),
    ...(cacheTtlSeconds !== undefined && { cacheTtlSeconds }),
  };
}
