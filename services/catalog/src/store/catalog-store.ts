/**
 * The catalog's collections. Free-form user JSON (schemas, tool config, bindings) is held as JSON
 * text in string fields, never as nested documents, so no user key reaches a query or the
 * backend's key rules (docs/architecture.md "Store backends").
 *
 * FerretDB 1.24 makes only inserts against unique indexes atomic across processes, so every
 * invariant that must hold under concurrency is an insert: version numbers (unique parent+version),
 * one draft per skill (a slot document keyed by the skill id), one toolKey per organization.
 */
import type { Collection, Store } from "@kiln/kit/store";
import type { PromptVersionContent } from "../domain/prompt-version.js";
import type { ToolType } from "../domain/tool-config.js";
import type { ToolPin } from "../domain/tool-pins.js";

export type VersionStatus = "draft" | "published";

/** What every versioned resource (prompt, tool, skill, agent) holds besides its family's own fields. */
export interface ResourceDoc {
  _id: string;
  organizationId: string;
  name: string;
  description: string;
  createdAt: Date;
  updatedAt: Date;
}

/** What every version holds, whichever family it is of: its number counts up from 1 per parent. */
export interface VersionDoc {
  _id: string;
  organizationId: string;
  version: number;
  createdAt: Date;
  /** Who created it; absent on versions made before authors were kept, null on imported ones. */
  createdBy?: Author | null;
  /** The change message given at creation; absent or null: none. */
  message?: string | null;
}

/** A version's author: a member (`user`), an API key (`api_key`) or a service acting for the organization. */
export interface Author {
  type: "user" | "api_key" | "service";
  id: string;
}

/** A version that is drafted, then published (every family but tools): publishing sets `status`/`publishedAt`, once. */
export interface DraftedVersionDoc extends VersionDoc {
  status: VersionStatus;
  publishedAt: Date | null;
}

export interface PromptDoc extends ResourceDoc {
  defaultModel: string | null;
  /**
   * The response cache's default TTL (seconds) of each of its labels that has one, `production`
   * included (label-cache-ttl.ts); absent: none has one. Keys are label names (no `.` or `$`).
   */
  labelCacheTtlSeconds?: Record<string, number>;
}

/** Immutable once inserted, except `status`/`publishedAt`, which publishing sets once. */
export interface PromptVersionDoc extends DraftedVersionDoc, PromptVersionContent {
  promptId: string;
  model: string | null;
  tools: ToolPin[];
}

export interface ToolDoc extends ResourceDoc {
  /** Unique per organization (unique index). */
  toolKey: string;
}

/** Immutable; the current version of a tool is its highest-numbered one. */
export interface ToolVersionDoc extends VersionDoc {
  toolId: string;
  type: ToolType;
  /** JSON text. */
  config: string;
  /** JSON text. */
  inputSchema: string;
}

export type SkillDoc = ResourceDoc;

export interface CompositionStepDoc {
  order: number;
  alias: string;
  promptId: string;
  promptVersionId: string;
  /** The prompt's name when the step was composed. */
  promptName: string;
  /** The pinned prompt version's number. */
  version: number;
  /** JSON text: variable name → binding. */
  variables: string;
}

export interface SkillVersionDoc extends DraftedVersionDoc {
  skillId: string;
  promptComposition: CompositionStepDoc[];
  tools: ToolPin[];
  /** JSON text, derived from the composition whenever it changes. */
  inputSchema: string;
  /** JSON text, derived from the composition whenever it changes. */
  outputSchema: string;
  updatedAt: Date;
}

/** At most one per skill (`_id` is the skill id): the claim of its one draft version. */
export interface SkillDraftSlotDoc {
  _id: string;
  versionId: string;
  createdAt: Date;
}

export type AgentDoc = ResourceDoc;

/**
 * A version of an agent; its workflow is configuration of the version (docs/concepts.md "Agent"). Drafts
 * change only through the workflow save; a published version never changes again, and its workflow
 * has every reference pinned to a version.
 */
export interface AgentVersionDoc extends DraftedVersionDoc {
  agentId: string;
  /** JSON text; "{}" for a new agent's empty draft. */
  workflow: string;
  updatedAt: Date;
}

/** At most one per agent (`_id` is the agent id): the claim of its one draft version. */
export interface AgentDraftSlotDoc {
  _id: string;
  versionId: string;
  createdAt: Date;
}

export type LabelKind = "prompt" | "skill" | "agent";

/**
 * A label of a prompt, skill or agent other than `production` (derived from the live published
 * version) and `latest` (the newest version). `_id` is `<kind>/<parentId>/<label>`.
 */
export interface LabelDoc {
  _id: string;
  organizationId: string;
  kind: LabelKind;
  parentId: string;
  label: string;
  versionId: string;
  updatedAt: Date;
  updatedBy: string;
}

/** One move of a label (publishing included), kept for ever; newest first by `_id`. */
export interface LabelMoveDoc {
  _id: string;
  organizationId: string;
  kind: LabelKind;
  parentId: string;
  label: string;
  /** Null when the label was deleted. */
  versionId: string | null;
  version: number | null;
  previousVersionId: string | null;
  action: "moved" | "published" | "deleted";
  at: Date;
  by: string;
}

/**
 * Which of the organization's things an import made from which thing of a bundle (`_id` is
 * `<organizationId>/<id in the bundle>`): a second import of the same bundle finds them and
 * changes nothing. The unique `_id` also keeps two concurrent imports from both creating one.
 */
export interface ImportMapDoc {
  _id: string;
  organizationId: string;
  targetId: string;
  importId: string;
}

/** One step an import's undo takes: delete what it inserted, put back what it changed. */
export interface UndoStep {
  collection: keyof CatalogCollections;
  id: string;
  /** The document before the import; null when the import inserted it. */
  before: Record<string, unknown> | null;
}

/**
 * The journal of one import (bundles.ts), written before it changes anything: `applying` →
 * `applied` (the catalog's part done, the evaluation cases under way) → `committed`; or `undone`.
 * An import left `applying` or `applied` for too long (its caller died) is undone by a sweep.
 */
export interface ImportDoc {
  _id: string;
  organizationId: string;
  status: "applying" | "applied" | "committed" | "undone";
  undo: UndoStep[];
  /** Label moves recorded by the import: their events go out when it commits. */
  labelMoveIds: string[];
  /** Prompts and skills whose live version the import may change. */
  touched: { prompts: string[]; skills: string[] };
  createdAt: Date;
  updatedAt: Date;
}

export interface CatalogCollections {
  prompts: Collection<PromptDoc>;
  promptVersions: Collection<PromptVersionDoc>;
  tools: Collection<ToolDoc>;
  toolVersions: Collection<ToolVersionDoc>;
  skills: Collection<SkillDoc>;
  skillVersions: Collection<SkillVersionDoc>;
  skillDraftSlots: Collection<SkillDraftSlotDoc>;
  agents: Collection<AgentDoc>;
  agentVersions: Collection<AgentVersionDoc>;
  agentDraftSlots: Collection<AgentDraftSlotDoc>;
  labels: Collection<LabelDoc>;
  labelMoves: Collection<LabelMoveDoc>;
  importMap: Collection<ImportMapDoc>;
  imports: Collection<ImportDoc>;
}

export function catalogCollections(store: Store): CatalogCollections {
  return {
    prompts: store.collection("prompts"),
    promptVersions: store.collection("prompt_versions"),
    tools: store.collection("tools"),
    toolVersions: store.collection("tool_versions"),
    skills: store.collection("skills"),
    skillVersions: store.collection("skill_versions"),
    skillDraftSlots: store.collection("skill_draft_slots"),
    agents: store.collection("agents"),
    agentVersions: store.collection("agent_versions"),
    agentDraftSlots: store.collection("agent_draft_slots"),
    labels: store.collection("labels"),
    labelMoves: store.collection("label_moves"),
    importMap: store.collection("import_map"),
    imports: store.collection("imports"),
  };
}

export async function ensureCatalogIndexes(store: Store): Promise<void> {
  await store.ensureIndexes("prompts", [
    { keys: { organizationId: 1, _id: -1 } },
    // A model named by its prompt's name (the /v1 routes), newest first.
    { keys: { organizationId: 1, name: 1, _id: -1 } },
  ]);
  await store.ensureIndexes("prompt_versions", [{ keys: { promptId: 1, version: 1 }, unique: true }]);
  await store.ensureIndexes("tools", [
    { keys: { organizationId: 1, toolKey: 1 }, unique: true },
    { keys: { organizationId: 1, _id: -1 } },
  ]);
  await store.ensureIndexes("tool_versions", [{ keys: { toolId: 1, version: 1 }, unique: true }]);
  await store.ensureIndexes("skills", [
    { keys: { organizationId: 1, _id: -1 } },
    { keys: { organizationId: 1, name: 1, _id: -1 } },
  ]);
  await store.ensureIndexes("skill_versions", [{ keys: { skillId: 1, version: 1 }, unique: true }]);
  await store.ensureIndexes("agents", [{ keys: { organizationId: 1, _id: -1 } }]);
  await store.ensureIndexes("agent_versions", [{ keys: { agentId: 1, version: 1 }, unique: true }]);
  await store.ensureIndexes("labels", [{ keys: { kind: 1, parentId: 1 } }]);
  await store.ensureIndexes("import_map", [{ keys: { importId: 1 } }]);
  await store.ensureIndexes("imports", [{ keys: { status: 1, updatedAt: 1 } }]);
  await store.ensureIndexes("label_moves", [{ keys: { kind: 1, parentId: 1, label: 1, _id: -1 } }]);
}
