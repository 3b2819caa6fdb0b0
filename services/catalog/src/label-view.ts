/** A label as the label RPCs answer it: where it points, who moved it last, and what may move it. */
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
}

export function labelView(
  kind: LabelKind,
  parentId: string,
  label: string,
  version: AnyVersion,
  at: Date,
  by: string,
  protectedLabels: readonly string[],
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
  };
}
