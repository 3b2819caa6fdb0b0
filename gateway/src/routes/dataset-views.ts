/** Dataset and dataset item views (docs/datasets.md) and their conversions from the DatasetService's messages. */
import type { Dataset, DatasetItem } from "@kiln/proto/datasets";
import Type from "typebox";
import { operations } from "../http/operation.js";
import { Nullable, OneOf, Timestamp } from "../schemas.js";
import { jsonValueOf } from "./evaluation-case-mappers.js";
import { iso } from "./views.js";

export const datasetOp = operations({ tags: ["datasets"], stability: "beta" });

export const SOURCE_KINDS = ["evaluation_case", "run", "annotation_item"] as const;

export const DatasetView = Type.Object(
  {
    id: Type.String(),
    organizationId: Type.String(),
    name: Type.String(),
    description: Type.String(),
    version: Type.Integer({ minimum: 0, description: "the current version: 0 until the items first change" }),
    itemCount: Type.Integer({ minimum: 0, description: "items at the current version" }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: "Dataset" },
);

export const DatasetItemView = Type.Object(
  {
    id: Type.String(),
    datasetId: Type.String(),
    input: Type.Record(Type.String(), Type.Unknown(), { description: "a JSON object: the variables (or skill input)" }),
    expectedOutput: Type.Unknown({ description: "any JSON; null: none" }),
    metadata: Type.Record(Type.String(), Type.Unknown(), { description: "a JSON object; {} when none" }),
    addedInVersion: Type.Integer({ minimum: 1 }),
    removedInVersion: Nullable(Type.Integer({ minimum: 1 }), {
      description: "the version it was removed at; null while it is in the current version",
    }),
    source: Nullable(Type.Object({ kind: OneOf(SOURCE_KINDS), id: Type.String() }), {
      description: "what it was copied from; null for items sent or imported",
    }),
    createdAt: Timestamp,
  },
  { $id: "DatasetItem" },
);

export const datasetView = (d: Dataset | undefined) => {
  if (!d) throw new Error("the evaluation service answered no dataset");
  return {
    id: d.id,
    organizationId: d.organizationId,
    name: d.name,
    description: d.description,
    version: d.version,
    itemCount: d.itemCount,
    createdAt: iso(d.createdAt) ?? "",
    updatedAt: iso(d.updatedAt) ?? "",
  };
};

const sourceKind = (kind: string) => {
  const known = SOURCE_KINDS.find((k) => k === kind);
  if (!known) throw new Error(`the evaluation service answered the source kind "${kind}"`);
  return known;
};

export const datasetItemView = (i: DatasetItem | undefined) => {
  if (!i) throw new Error("the evaluation service answered no dataset item");
  return {
    id: i.id,
    datasetId: i.datasetId,
    input: (jsonValueOf(i.input) ?? {}) as Record<string, unknown>,
    expectedOutput: jsonValueOf(i.expectedOutput),
    metadata: (jsonValueOf(i.metadata) ?? {}) as Record<string, unknown>,
    addedInVersion: i.addedInVersion,
    removedInVersion: i.removedInVersion ?? null,
    source: i.source ? { kind: sourceKind(i.source.kind), id: i.source.id } : null,
    createdAt: iso(i.createdAt) ?? "",
  };
};
