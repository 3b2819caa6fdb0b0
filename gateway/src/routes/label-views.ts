import type { Label, LabelMove } from "@kiln/proto/catalog";
import Type from "typebox";
import { Nullable, OneOf, Timestamp } from "../schemas.js";
import { fromCatalog } from "./catalog-views.js";
import { iso } from "./views.js";

/** Label views (docs/labels.md) and their conversions from the catalog's messages. */

export const LabelView = Type.Object(
  {
    label: Type.String(),
    versionId: Type.String(),
    version: Type.Integer(),
    updatedAt: Timestamp,
    updatedBy: Nullable(Type.String({ description: "the user or API key id that moved it last" })),
    readOnly: Type.Boolean({ description: "latest: it moves when a version is created" }),
    protected: Type.Boolean({ description: "only owners and admins (or keys with labels:write) move it" }),
    cacheTtlSeconds: Nullable(
      Type.Integer({
        description:
          'a prompt label\'s response-cache default for runs through it, in seconds (docs/cache.md "Defaults"); null: none (always for skills and agents)',
      }),
    ),
  },
  { $id: "Label", description: "production is the published version; latest the newest version" },
);

export const LabelMoveView = Type.Object(
  {
    id: Type.String(),
    label: Type.String(),
    action: OneOf(["moved", "published", "deleted"]),
    versionId: Nullable(Type.String({ description: "null when the label was deleted" })),
    version: Nullable(Type.Integer()),
    previousVersionId: Nullable(Type.String({ description: "null when the label did not exist before" })),
    at: Timestamp,
    by: Nullable(Type.String()),
  },
  { $id: "LabelMove" },
);

export const labelView = fromCatalog.view("label", (l: Label) => ({
  label: l.label,
  versionId: l.versionId,
  version: l.version,
  updatedAt: iso(l.updatedAt) ?? "",
  updatedBy: l.updatedBy || null,
  readOnly: l.readOnly,
  protected: l.protected,
  cacheTtlSeconds: l.cacheTtlSeconds ?? null,
}));

export const labelMoveView = (m: LabelMove) => ({
  id: m.id,
  label: m.label,
  action: m.action as "moved" | "published" | "deleted",
  versionId: m.versionId || null,
  version: m.versionId ? m.version : null,
  previousVersionId: m.previousVersionId || null,
  at: iso(m.at) ?? "",
  by: m.by || null,
});
