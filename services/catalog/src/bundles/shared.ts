/** What the parts of bundle import and export share: the kinds, the plan they fill, small conversions. */
import type { Bundle, ImportItem } from "@kiln/contracts/bundle";
import type { FieldIssue } from "@kiln/kit/errors";
import type { IdPrefix } from "@kiln/kit/ids";
import type { JsonObject } from "../domain/json-schema.js";
import type { CatalogCollections, LabelKind, LabelMoveDoc } from "../store/catalog-store.js";

/** The catalog's part of a bundle: evaluation cases are the evaluation service's to add. */
export type CatalogBundle = Bundle;

/** How a skill of the bundle maps, for the evaluation cases the caller imports next. */
export interface SkillMapping {
  sourceId: string;
  id: string;
  /** The skill does not exist yet (a dry run) or was created by this import. */
  created: boolean;
}

export interface ImportPlanResult {
  importId: string;
  items: ImportItem[];
  skills: SkillMapping[];
}

/** An import left unfinished this long (its caller died) is undone by the sweep. */
export const DEFAULT_STALE_IMPORT_MS = 15 * 60_000;

/** The order an import inserts in: versions (and draft slots) before what they belong to. */
export const INSERT_ORDER: readonly (keyof CatalogCollections)[] = [
  "toolVersions",
  "tools",
  "promptVersions",
  "prompts",
  "skillVersions",
  "skillDraftSlots",
  "skills",
  "agentVersions",
  "agentDraftSlots",
  "agents",
  "labels",
  "labelMoves",
];
export const INSERT_BATCH = 500;

/** Where each labelled, versioned kind is stored. */
export const KINDS = {
  prompt: { parents: "prompts", versions: "promptVersions", parentField: "promptId", prefix: "prm" },
  skill: {
    parents: "skills",
    versions: "skillVersions",
    parentField: "skillId",
    prefix: "skl",
    slots: "skillDraftSlots",
  },
  agent: {
    parents: "agents",
    versions: "agentVersions",
    parentField: "agentId",
    prefix: "agt",
    slots: "agentDraftSlots",
  },
} as const satisfies Record<
  LabelKind,
  {
    parents: "prompts" | "skills" | "agents";
    versions: "promptVersions" | "skillVersions" | "agentVersions";
    parentField: "promptId" | "skillId" | "agentId";
    prefix: IdPrefix;
    slots?: "skillDraftSlots" | "agentDraftSlots";
  }
>;
export type KindSpec = (typeof KINDS)[LabelKind];
export const slotsOf = (spec: KindSpec) => ("slots" in spec ? spec.slots : undefined);

export const iso = (d: Date | null) => (d ? d.toISOString() : null);
export const json = (text: string) => JSON.parse(text) as JsonObject;

export type Versioned = { version: number; status?: "draft" | "published"; publishedAt?: string | null };

/** Planned writes of an import, in the order they are made. */
export interface Plan {
  inserts: { collection: keyof CatalogCollections; doc: { _id: string } & Record<string, unknown> }[];
  updates: {
    collection: keyof CatalogCollections;
    doc: { _id: string } & Record<string, unknown>;
    before: Record<string, unknown>;
  }[];
  /** bundle id → id here. */
  ids: Map<string, string>;
  /** Bundle ids whose thing is new here (their map entries are written). */
  mapped: Map<string, string>;
  items: ImportItem[];
  conflicts: FieldIssue[];
  labelMoves: LabelMoveDoc[];
  /** Labels the import moves (publishing moves production): the protected ones need the right to. */
  movedLabels: Set<string>;
  touched: { prompts: string[]; skills: string[] };
}

export function toDate(value: string | null | undefined): Date | null {
  return value ? new Date(value) : null;
}
