/**
 * Export and import of an organization's catalog (docs/bundles.md, format `kiln.bundle/v1`).
 *
 * Export reads every prompt, tool, skill and agent with their versions and labels, oldest first, so
 * an import that creates them in bundle order gives an organization whose export is the same bundle
 * with other ids.
 *
 * Import plans everything before it writes anything: every id of the bundle is mapped to an
 * existing thing (the same id in this organization, or what an earlier import made of it: the
 * `import_map`) or to a new id, every reference is rewritten through that map, and every version's
 * content is checked as creating it would check it. A dry run stops there. A real import writes a
 * journal first (what to delete, what to put back), then the map entries (a unique key per bundle
 * id: two concurrent imports of one bundle cannot both create), then the documents; a failure
 * undoes the journal. FerretDB has no transactions (tech-notes §3), so "whole or nothing" is this
 * undo, and an import whose caller died half-way is undone by `sweep` after `staleAfterMs`.
 */
import type {
  Bundle,
  BundleAgent,
  BundlePrompt,
  BundleSkill,
  BundleTool,
  BundleToolPin,
  ImportItem,
} from "@kiln/kit/bundle";
import { BUNDLE_FORMAT, BundleSchema } from "@kiln/kit/bundle";
import { DomainError, type FieldIssue, failedPrecondition, invalidArgument, notFound } from "@kiln/kit/errors";
import { type IdPrefix, newId } from "@kiln/kit/ids";
import { createSchemaAjv } from "@kiln/kit/json-schema";
import { LATEST, labelNameIssue, PRODUCTION } from "@kiln/kit/labels";
import { LIMITS } from "@kiln/kit/limits";
import type { Logger } from "@kiln/kit/logger";
import type { Principal } from "@kiln/kit/principal";
import { isDuplicateKeyError } from "@kiln/kit/store";
import { SCOPES, type Scope } from "./access.js";
import { workflowDetails } from "./agents.js";
import type { CatalogDeps } from "./catalog-deps.js";
import { fieldPath, Issues } from "./domain/issues.js";
import { fieldOfPointer, type JsonObject } from "./domain/json-schema.js";
import { checkPromptVersion } from "./domain/prompt-version.js";
import { checkAliases, checkBindings, deriveSkillSchemas, type StepContract } from "./domain/skill-composition.js";
import { TOOL_KEY_PATTERN, type ToolType } from "./domain/tool-config.js";
import type { ToolPin } from "./domain/tool-pins.js";
import { livePublishedVersion, type VersionLike } from "./domain/versions.js";
import { parseWorkflow, REF_KEYS } from "./domain/workflow.js";
import { contractOf } from "./skills.js";
import type {
  AgentDoc,
  AgentVersionDoc,
  CatalogCollections,
  CompositionStepDoc,
  ImportDoc,
  LabelDoc,
  LabelKind,
  LabelMoveDoc,
  PromptDoc,
  PromptVersionDoc,
  SkillDoc,
  SkillVersionDoc,
  ToolDoc,
  ToolVersionDoc,
  UndoStep,
} from "./store/catalog-store.js";
import { checkToolVersion } from "./tools.js";
import { actorOf, labelId, labelMoveDoc } from "./versioned/label-moves.js";

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
const INSERT_ORDER: readonly (keyof CatalogCollections)[] = [
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
const INSERT_BATCH = 500;

/** Where each labelled, versioned kind is stored. */
const KINDS = {
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
type KindSpec = (typeof KINDS)[LabelKind];
const slotsOf = (spec: KindSpec) => ("slots" in spec ? spec.slots : undefined);

const iso = (d: Date | null) => (d ? d.toISOString() : null);
const json = (text: string) => JSON.parse(text) as JsonObject;

const validateBundle = createSchemaAjv().compile(BundleSchema);

/** Parses and checks the shape of a bundle; 400 with every problem's place otherwise. */
export function parseBundle(text: string): Bundle {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalidArgument("the bundle is not JSON", [{ field: "bundle", issue: "is not valid JSON" }]);
  }
  if (!validateBundle(value)) {
    const issues: FieldIssue[] = (validateBundle.errors ?? []).slice(0, 50).map((e) => {
      const extra = (e.params as { additionalProperty?: string }).additionalProperty;
      const field = fieldOfPointer("", e.instancePath, value) || "bundle";
      return extra
        ? { field: fieldPath(field === "bundle" ? "" : field, extra), issue: "is not a field of the bundle" }
        : { field, issue: e.message ?? "is invalid" };
    });
    throw invalidArgument(`not a ${BUNDLE_FORMAT} bundle`, issues);
  }
  return value as Bundle;
}

type Versioned = { version: number; status?: "draft" | "published"; publishedAt?: string | null };

/** Planned writes of an import, in the order they are made. */
interface Plan {
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

export type Bundles = ReturnType<typeof createBundles>;

export function createBundles(deps: CatalogDeps, options: { logger?: Logger; staleAfterMs?: number } = {}) {
  const c = deps.collections;
  const staleAfterMs = options.staleAfterMs ?? DEFAULT_STALE_IMPORT_MS;

  /** Every scope of the four families, asked of identity at once. */
  async function authorize(principal: Principal, organizationId: string, scopes: readonly Scope[]) {
    await Promise.all(scopes.map((scope) => deps.access.inOrganization(principal, organizationId, scope)));
  }

  // ---------------------------------------------------------------- export

  async function labelsOf(organizationId: string) {
    const docs = await c.labels.find({ organizationId });
    const byParent = new Map<string, LabelDoc[]>();
    for (const l of docs) {
      const key = `${l.kind}/${l.parentId}`;
      byParent.set(key, [...(byParent.get(key) ?? []), l]);
    }
    return (kind: LabelKind, parentId: string, versions: readonly VersionLike[]) => {
      const labels: Record<string, number> = {};
      const live = livePublishedVersion(versions);
      if (live) labels[PRODUCTION] = live.version;
      for (const l of (byParent.get(`${kind}/${parentId}`) ?? []).sort((a, b) => a.label.localeCompare(b.label))) {
        const v = versions.find((x) => x._id === l.versionId);
        if (v) labels[l.label] = v.version;
      }
      return labels;
    };
  }

  function group<T extends Record<K, string>, K extends string>(docs: T[], key: K): Map<string, T[]> {
    const map = new Map<string, T[]>();
    for (const d of docs) map.set(d[key], [...(map.get(d[key]) ?? []), d]);
    return map;
  }

  async function exportBundle(principal: Principal, input: { organizationId: string }): Promise<CatalogBundle> {
    const organizationId = input.organizationId;
    await authorize(principal, organizationId, [
      SCOPES.toolsRead,
      SCOPES.promptsRead,
      SCOPES.skillsRead,
      SCOPES.agentsRead,
    ]);
    const byId = { sort: { _id: 1 } } as const;
    const byVersion = { sort: { version: 1 } } as const;
    const [tools, toolVersions, prompts, promptVersions, skills, skillVersions, agents, agentVersions, labelsFor] =
      await Promise.all([
        c.tools.find({ organizationId }, byId),
        c.toolVersions.find({ organizationId }, byVersion),
        c.prompts.find({ organizationId }, byId),
        c.promptVersions.find({ organizationId }, byVersion),
        c.skills.find({ organizationId }, byId),
        c.skillVersions.find({ organizationId }, byVersion),
        c.agents.find({ organizationId }, byId),
        c.agentVersions.find({ organizationId }, byVersion),
        labelsOf(organizationId),
      ]);
    const tv = group(toolVersions, "toolId");
    const pv = group(promptVersions, "promptId");
    const sv = group(skillVersions, "skillId");
    const av = group(agentVersions, "agentId");
    const pins = (list: ToolPin[]): BundleToolPin[] =>
      list.map((p) => ({ toolId: p.toolId, toolVersionId: p.toolVersionId, toolKey: p.toolKey }));
    const times = (v: { status: "draft" | "published"; createdAt: Date; publishedAt: Date | null }) => ({
      status: v.status,
      createdAt: v.createdAt.toISOString(),
      publishedAt: iso(v.publishedAt),
    });
    /** What every labelled thing of the bundle starts with. */
    const head = (
      kind: LabelKind,
      d: { _id: string; name: string; description: string; createdAt: Date },
      versions: readonly VersionLike[],
    ) => ({
      id: d._id,
      name: d.name,
      description: d.description,
      createdAt: d.createdAt.toISOString(),
      labels: labelsFor(kind, d._id, versions),
    });
    return {
      format: BUNDLE_FORMAT,
      exportedAt: deps.now().toISOString(),
      tools: tools.map(
        (t): BundleTool => ({
          id: t._id,
          toolKey: t.toolKey,
          name: t.name,
          description: t.description,
          createdAt: t.createdAt.toISOString(),
          versions: (tv.get(t._id) ?? []).map((v) => ({
            id: v._id,
            version: v.version,
            type: v.type,
            config: json(v.config),
            inputSchema: json(v.inputSchema),
            createdAt: v.createdAt.toISOString(),
          })),
        }),
      ),
      prompts: prompts.map((p): BundlePrompt => {
        const versions = pv.get(p._id) ?? [];
        return {
          ...head("prompt", p, versions),
          defaultModel: p.defaultModel,
          versions: versions.map((v) => ({
            id: v._id,
            version: v.version,
            ...times(v),
            systemPrompt: v.systemPrompt,
            developerPrompt: v.developerPrompt,
            variablesSchema: json(v.variablesSchema),
            responseFormat: json(v.responseFormat),
            temperature: v.temperature,
            maxOutputTokens: v.maxOutputTokens,
            model: v.model,
            tools: pins(v.tools),
          })),
        };
      }),
      skills: skills.map((s): BundleSkill => {
        const versions = sv.get(s._id) ?? [];
        return {
          ...head("skill", s, versions),
          versions: versions.map((v) => ({
            id: v._id,
            version: v.version,
            ...times(v),
            promptComposition: [...v.promptComposition]
              .sort((a, b) => a.order - b.order)
              .map((step) => ({
                alias: step.alias,
                promptId: step.promptId,
                promptVersionId: step.promptVersionId,
                variables: json(step.variables),
              })),
            tools: pins(v.tools),
          })),
          evaluationCases: [],
        };
      }),
      agents: agents.map((a): BundleAgent => {
        const versions = av.get(a._id) ?? [];
        return {
          ...head("agent", a, versions),
          versions: versions.map((v) => ({ id: v._id, version: v.version, ...times(v), workflow: json(v.workflow) })),
        };
      }),
    };
  }

  // ---------------------------------------------------------------- import: planning

  async function plan(principal: Principal, organizationId: string, bundle: Bundle): Promise<Plan> {
    const at = deps.now();
    const actor = actorOf(principal);
    const issues = new Issues();
    const p: Plan = {
      inserts: [],
      updates: [],
      ids: new Map(),
      mapped: new Map(),
      items: [],
      conflicts: [],
      labelMoves: [],
      movedLabels: new Set(),
      touched: { prompts: [], skills: [] },
    };
    /** Prompt versions by their id here, planned or stored: what skill steps are checked against. */
    const promptVersions = new Map<string, PromptVersionDoc>();
    const promptNames = new Map<string, string>();
    const toolKeys = new Map<string, string>();

    /** The thing of this organization a bundle id names: the same id, or what an earlier import made of it. */
    async function existing<T extends { _id: string; organizationId: string }>(
      collection: keyof CatalogCollections,
      sourceId: string,
    ): Promise<T | null> {
      const col = c[collection] as unknown as { findOne(f: object): Promise<T | null> };
      const same = await col.findOne({ _id: sourceId, organizationId });
      if (same) return same;
      const entry = await c.importMap.findOne({ _id: `${organizationId}/${sourceId}` });
      return entry ? col.findOne({ _id: entry.targetId, organizationId }) : null;
    }

    /** The id here of a thing the bundle refers to: in the bundle, or already in this organization. */
    async function refer(collection: keyof CatalogCollections, sourceId: string, field: string): Promise<string> {
      const known = p.ids.get(sourceId);
      if (known) return known;
      // A thing in conflict is reported once, as the conflict, not again by everything using it.
      if (conflicted.has(sourceId)) return sourceId;
      const found = await existing<{ _id: string; organizationId: string }>(collection, sourceId);
      if (found) {
        p.ids.set(sourceId, found._id);
        return found._id;
      }
      issues.add(field, `refers to ${sourceId}, which is neither in the bundle nor in this organization`);
      return sourceId;
    }

    function sub(base: string, check: (issues: Issues) => void) {
      const inner = new Issues();
      check(inner);
      for (const i of inner.all()) issues.add(fieldPath(base, i.field), i.issue);
    }

    function checkNumbering(field: string, versions: readonly Versioned[]) {
      versions.forEach((v, i) => {
        if (v.version !== i + 1)
          issues.add(
            fieldPath(fieldPath(field, i), "version"),
            `must be ${i + 1} (versions are numbered 1, 2, 3… in order)`,
          );
        if (v.status === "published" && !v.publishedAt)
          issues.add(fieldPath(fieldPath(field, i), "publishedAt"), "is required for a published version");
        if (v.status === "draft" && v.publishedAt)
          issues.add(fieldPath(fieldPath(field, i), "publishedAt"), "must be null for a draft");
      });
    }

    /** Checks the labels of one thing; production must be what its versions make live. */
    function checkLabels(
      field: string,
      labels: Record<string, number>,
      versions: readonly (Versioned & { id: string })[],
    ) {
      const live = livePublishedVersion(
        versions.map((v) => ({
          _id: v.id,
          version: v.version,
          status: v.status ?? "draft",
          publishedAt: toDate(v.publishedAt),
        })),
      );
      for (const [label, version] of Object.entries(labels)) {
        const at = fieldPath(fieldPath(field, "labels"), label);
        if (label === PRODUCTION) {
          if (live?.version !== version)
            issues.add(at, live ? `must be ${live.version}, the version published last` : "names no published version");
          continue;
        }
        if (label === LATEST) {
          issues.add(at, "is derived (the newest version) and cannot be set");
          continue;
        }
        const problem = labelNameIssue(label);
        if (problem) issues.add(at, problem);
        if (!versions.some((v) => v.version === version))
          issues.add(at, `names version ${version}, which is not in the bundle`);
      }
    }

    /**
     * Matches the bundle's versions of an existing thing to its versions here by number: one made
     * from the same bundle version is kept (a draft there that is published in the bundle is
     * published here); any other version of that number is a conflict; numbers beyond are created.
     */
    async function matchVersions<V extends { _id: string; version: number; status?: string }>(
      stored: readonly V[],
      versions: readonly { id: string; version: number }[],
    ): Promise<{ create: number[]; keep: Map<number, V>; conflict?: string }> {
      const keep = new Map<number, V>();
      const create: number[] = [];
      for (const v of versions) {
        const here = stored.find((s) => s.version === v.version);
        if (!here) {
          create.push(v.version);
          continue;
        }
        const entry = here._id === v.id ? null : await c.importMap.findOne({ _id: `${organizationId}/${v.id}` });
        if (here._id !== v.id && entry?.targetId !== here._id) {
          return { create, keep, conflict: `version ${v.version} here is not the bundle's version ${v.version}` };
        }
        keep.set(v.version, here);
      }
      return { create, keep };
    }

    const insert = <T extends { _id: string }>(collection: keyof CatalogCollections, doc: T) =>
      p.inserts.push({ collection, doc: doc as { _id: string } & Record<string, unknown> });
    const mapNew = (sourceId: string, prefix: IdPrefix) => {
      const id = newId(prefix);
      p.ids.set(sourceId, id);
      p.mapped.set(sourceId, id);
      return id;
    };
    const keepId = (sourceId: string, id: string) => {
      p.ids.set(sourceId, id);
    };
    const conflicted = new Set<string>();
    const conflict = (
      field: string,
      item: Omit<ImportItem, "outcome" | "id">,
      detail: string,
      versions: readonly { id: string }[] = [],
    ) => {
      conflicted.add(item.sourceId);
      for (const v of versions) conflicted.add(v.id);
      p.conflicts.push({ field, issue: detail });
      p.items.push({ ...item, id: null, outcome: "conflict", detail });
    };

    /** A label move the import records (its event goes out when the import commits). */
    const planMove = (move: Parameters<typeof labelMoveDoc>[0]) => {
      const doc = labelMoveDoc(move);
      insert("labelMoves", doc);
      p.labelMoves.push(doc);
    };

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

    const pinsOf = async (list: readonly BundleToolPin[], field: string): Promise<ToolPin[]> => {
      const out: ToolPin[] = [];
      for (const [i, pin] of list.entries()) {
        const toolId = await refer("tools", pin.toolId, fieldPath(fieldPath(field, i), "toolId"));
        const toolVersionId = await refer(
          "toolVersions",
          pin.toolVersionId,
          fieldPath(fieldPath(field, i), "toolVersionId"),
        );
        let toolKey = toolKeys.get(toolId);
        if (toolKey === undefined)
          toolKey = (await c.tools.findOne({ _id: toolId, organizationId }))?.toolKey ?? pin.toolKey;
        out.push({ toolId, toolVersionId, toolKey });
      }
      return out;
    };

    const drafts = (field: string, versions: readonly Versioned[]) => {
      if (versions.filter((v) => v.status === "draft").length > 1)
        issues.add(fieldPath(field, "versions"), "holds more than one draft");
    };

    // Tools
    for (const [i, t] of bundle.tools.entries()) {
      const field = fieldPath("tools", i);
      if (!TOOL_KEY_PATTERN.test(t.toolKey))
        issues.add(fieldPath(field, "toolKey"), "must be 1 to 64 letters, digits, _ or -");
      sub(field, (s) => {
        s.text("name", t.name);
        s.text("description", t.description, { min: 0, max: LIMITS.descriptionChars, lines: true });
      });
      checkNumbering(fieldPath(field, "versions"), t.versions);
      for (const [j, v] of t.versions.entries()) {
        sub(fieldPath(fieldPath(field, "versions"), j), (s) =>
          checkToolVersion(s, deps, organizationId, v.type, JSON.stringify(v.config), JSON.stringify(v.inputSchema)),
        );
      }
      const item = { kind: "tool" as const, sourceId: t.id, name: t.name };
      const here = await existing<ToolDoc>("tools", t.id);
      if (!here) {
        const clash = await c.tools.findOne({ organizationId, toolKey: t.toolKey });
        if (clash) {
          conflict(
            field,
            item,
            `the tool key ${t.toolKey} is taken here by ${clash._id}, which this bundle did not make`,
            t.versions,
          );
          continue;
        }
        const id = mapNew(t.id, "tool");
        toolKeys.set(id, t.toolKey);
        insert("tools", {
          _id: id,
          organizationId,
          toolKey: t.toolKey,
          name: t.name.trim(),
          description: t.description.trim(),
          createdAt: new Date(t.createdAt),
          updatedAt: at,
        } satisfies ToolDoc);
        for (const v of t.versions) insert("toolVersions", toolVersionDoc(mapNew(v.id, "tv"), id, v));
        p.items.push({ ...item, id, outcome: "created" });
        continue;
      }
      keepId(t.id, here._id);
      toolKeys.set(here._id, here.toolKey);
      const stored = await c.toolVersions.find({ toolId: here._id }, { sort: { version: 1 } });
      const m = await matchVersions(stored, t.versions);
      if (m.conflict) {
        conflict(field, item, m.conflict, t.versions);
        continue;
      }
      for (const [n, v] of m.keep) keepId(t.versions[n - 1]?.id ?? "", v._id);
      for (const n of m.create) {
        const v = t.versions[n - 1];
        if (v) insert("toolVersions", toolVersionDoc(mapNew(v.id, "tv"), here._id, v));
      }
      p.items.push({
        ...item,
        id: here._id,
        outcome: m.create.length > 0 ? "updated" : "skipped",
        ...(m.create.length > 0 && { detail: `${m.create.length} new version(s)` }),
      });
    }

    function toolVersionDoc(id: string, toolId: string, v: BundleTool["versions"][number]): ToolVersionDoc {
      return {
        _id: id,
        toolId,
        organizationId,
        version: v.version,
        type: v.type as ToolType,
        config: JSON.stringify(v.config),
        inputSchema: JSON.stringify(v.inputSchema),
        createdAt: new Date(v.createdAt),
      };
    }

    /**
     * The part every labelled, versioned thing shares: its fields checked, the thing here it is
     * (if any), its versions matched, its id mapped. Undefined when it is in conflict (reported).
     */
    async function openVersioned<
      P extends { _id: string; name: string },
      V extends { _id: string; version: number; status: "draft" | "published"; publishedAt: Date | null },
    >(
      kind: LabelKind,
      index: number,
      thing: {
        id: string;
        name: string;
        description: string;
        labels: Record<string, number>;
        versions: readonly (Versioned & { id: string })[];
      },
    ) {
      const spec: KindSpec = KINDS[kind];
      const slots = slotsOf(spec);
      const field = fieldPath(spec.parents, index);
      sub(field, (s) => {
        s.text("name", thing.name);
        s.text("description", thing.description, { min: 0, max: LIMITS.descriptionChars, lines: true });
      });
      checkNumbering(fieldPath(field, "versions"), thing.versions);
      checkLabels(field, thing.labels, thing.versions);
      if (slots) drafts(field, thing.versions);
      const item = { kind, sourceId: thing.id, name: thing.name };
      const here = await existing<P & { organizationId: string }>(spec.parents, thing.id);
      const stored = here
        ? ((await (c[spec.versions] as unknown as { find(f: object, o: object): Promise<V[]> }).find(
            { [spec.parentField]: here._id },
            { sort: { version: 1 } },
          )) as V[])
        : [];
      const m = here
        ? await matchVersions(stored, thing.versions)
        : { create: thing.versions.map((v) => v.version), keep: new Map<number, V>() };
      if ("conflict" in m && m.conflict) {
        conflict(field, item, m.conflict, thing.versions);
        return undefined;
      }
      const id = here ? here._id : mapNew(thing.id, spec.prefix);
      if (here) keepId(thing.id, here._id);
      for (const [n, v] of m.keep) keepId(thing.versions[n - 1]?.id ?? "", v._id);
      if (here && slots && (await draftClash(slots, id, field, item, thing.versions, m.create))) return undefined;
      const versionIdOf = (n: number) => p.ids.get(thing.versions[n - 1]?.id ?? "");
      return { field, item, here, stored, m, id, versionIdOf };
    }

    /**
     * The part every labelled, versioned thing shares after its new versions are planned: the
     * thing itself when new, drafts here the bundle has published, its labels, its report line.
     */
    async function closeVersioned<
      V extends { _id: string; version: number; status: "draft" | "published"; publishedAt: Date | null },
    >(
      kind: LabelKind,
      thing: {
        name: string;
        description: string;
        createdAt: string;
        labels: Record<string, number>;
        versions: readonly Versioned[];
      },
      opened: {
        item: Omit<ImportItem, "outcome" | "id">;
        here: unknown;
        stored: V[];
        m: { create: number[]; keep: Map<number, V> };
        id: string;
        versionIdOf: (n: number) => string | undefined;
      },
      extra: Record<string, unknown> = {},
    ) {
      const spec: KindSpec = KINDS[kind];
      const slots = slotsOf(spec);
      const { item, here, stored, m, id, versionIdOf } = opened;
      if (!here) {
        insert(spec.parents, {
          _id: id,
          organizationId,
          name: thing.name.trim(),
          description: thing.description.trim(),
          ...extra,
          createdAt: new Date(thing.createdAt),
          updatedAt: at,
        });
      }
      const published = here ? planPublishes(kind, spec.versions, id, m.keep, thing.versions, stored) : 0;
      if (published > 0) {
        if (kind === "prompt") p.touched.prompts.push(id);
        if (kind === "skill") p.touched.skills.push(id);
        // The draft slot of a draft the import publishes is released, as publishing does.
        const slot = slots ? await c[slots].findOne({ _id: id }) : null;
        if (slots && slot && [...m.keep.values()].some((v) => v._id === slot.versionId)) {
          p.updates.push({
            collection: slots,
            doc: { _id: id, deleted: true },
            before: slot as unknown as Record<string, unknown>,
          });
        }
      }
      const moved = await planLabels(kind, id, thing.labels, versionIdOf, !here);
      if (!here) {
        if (Object.keys(thing.labels).length > 0 || thing.versions.some((v) => v.status === "published"))
          p.movedLabels.add(PRODUCTION);
        p.items.push({ ...item, id, outcome: "created" });
      } else p.items.push(changed(item, id, m.create.length, published, moved));
    }

    // Prompts
    for (const [i, pr] of bundle.prompts.entries()) {
      const opened = await openVersioned<PromptDoc, PromptVersionDoc>("prompt", i, pr);
      if (!opened) continue;
      const { field, here, m, id: promptId } = opened;
      promptNames.set(promptId, here?.name ?? pr.name.trim());
      for (const v of m.keep.values()) promptVersions.set(v._id, v);
      for (const [j, v] of pr.versions.entries()) {
        if (!m.create.includes(v.version)) continue;
        const vField = fieldPath(fieldPath(field, "versions"), j);
        let content: ReturnType<typeof checkPromptVersion> | undefined;
        sub(vField, (s) => {
          content = checkPromptVersion(s, {
            systemPrompt: v.systemPrompt,
            ...(v.developerPrompt !== null && { developerPrompt: v.developerPrompt }),
            variablesSchemaJson: JSON.stringify(v.variablesSchema),
            responseFormatJson: JSON.stringify(v.responseFormat),
            ...(v.temperature !== null && { temperature: v.temperature }),
            ...(v.maxOutputTokens !== null && { maxOutputTokens: v.maxOutputTokens }),
            ...(v.model !== null && { model: v.model }),
          });
        });
        const doc: PromptVersionDoc = {
          _id: mapNew(v.id, "pv"),
          promptId,
          organizationId,
          version: v.version,
          status: v.status,
          ...(content ?? {
            systemPrompt: v.systemPrompt,
            developerPrompt: v.developerPrompt,
            variablesSchema: "{}",
            responseFormat: '{"type":"text"}',
            temperature: v.temperature,
            maxOutputTokens: v.maxOutputTokens,
          }),
          model: v.model,
          tools: await pinsOf(v.tools, fieldPath(vField, "tools")),
          createdAt: new Date(v.createdAt),
          publishedAt: toDate(v.publishedAt),
        };
        promptVersions.set(doc._id, doc);
        insert("promptVersions", doc);
      }
      await closeVersioned("prompt", pr, opened, { defaultModel: pr.defaultModel });
    }

    // Skills
    for (const [i, sk] of bundle.skills.entries()) {
      const opened = await openVersioned<SkillDoc, SkillVersionDoc>("skill", i, sk);
      if (!opened) continue;
      const { field, m, id: skillId } = opened;
      for (const [j, v] of sk.versions.entries()) {
        if (!m.create.includes(v.version)) continue;
        const vField = fieldPath(fieldPath(field, "versions"), j);
        const stepsField = fieldPath(vField, "promptComposition");
        const aliases = checkAliasesInto(
          vField,
          v.promptComposition.map((s) => s.alias),
        );
        const steps: CompositionStepDoc[] = [];
        const contracts: StepContract[] = [];
        for (const [k, step] of v.promptComposition.entries()) {
          const at_ = fieldPath(stepsField, k);
          const promptId = await refer("prompts", step.promptId, fieldPath(at_, "promptId"));
          const promptVersionId = await refer(
            "promptVersions",
            step.promptVersionId,
            fieldPath(at_, "promptVersionId"),
          );
          let pinned = promptVersions.get(promptVersionId);
          if (!pinned) {
            pinned = (await c.promptVersions.findOne({ _id: promptVersionId, organizationId })) ?? undefined;
            if (pinned) promptVersions.set(pinned._id, pinned);
          }
          if (!pinned) continue;
          if (pinned.promptId !== promptId)
            issues.add(fieldPath(at_, "promptVersionId"), "is not a version of the step's prompt");
          if (pinned.status !== "published")
            issues.add(fieldPath(at_, "promptVersionId"), `version ${pinned.version} is not published`);
          const alias = aliases[k] ?? `step${k + 1}`;
          let name = promptNames.get(promptId);
          if (name === undefined) name = (await c.prompts.findOne({ _id: promptId, organizationId }))?.name ?? "";
          steps.push({
            order: k + 1,
            alias,
            promptId,
            promptVersionId,
            promptName: name,
            version: pinned.version,
            variables: JSON.stringify(step.variables),
          });
          contracts.push(contractOf(alias, step.variables as JsonObject, pinned));
        }
        sub(vField, (s) => checkBindings(s, "promptComposition", contracts));
        const schemas = contracts.length === v.promptComposition.length ? deriveSkillSchemas(contracts) : null;
        const id = mapNew(v.id, "sv");
        insert("skillVersions", {
          _id: id,
          skillId,
          organizationId,
          version: v.version,
          status: v.status,
          promptComposition: steps,
          tools: await pinsOf(v.tools, fieldPath(vField, "tools")),
          inputSchema: JSON.stringify(schemas?.inputSchema ?? {}),
          outputSchema: JSON.stringify(schemas?.outputSchema ?? {}),
          createdAt: new Date(v.createdAt),
          updatedAt: toDate(v.publishedAt) ?? new Date(v.createdAt),
          publishedAt: toDate(v.publishedAt),
        } satisfies SkillVersionDoc);
        if (v.status === "draft") await claimSlot("skillDraftSlots", skillId, id);
      }
      await closeVersioned("skill", sk, opened);
    }

    /**
     * A new draft for a thing that has one here already is a conflict (one draft per skill or
     * agent); reports it and answers true.
     */
    async function draftClash(
      slots: "skillDraftSlots" | "agentDraftSlots",
      parentId: string,
      field: string,
      item: Omit<ImportItem, "outcome" | "id">,
      bundleVersions: readonly (Versioned & { id: string })[],
      created: readonly number[],
    ): Promise<boolean> {
      if (!bundleVersions.some((v) => v.status === "draft" && created.includes(v.version))) return false;
      const slot = await c[slots].findOne({ _id: parentId });
      const versions = slots === "skillDraftSlots" ? c.skillVersions : c.agentVersions;
      const draft = slot ? await versions.findOne({ _id: slot.versionId, status: "draft" }) : null;
      if (!draft) return false;
      conflict(field, item, `has a draft here (version ${draft.version}) and another in the bundle`, bundleVersions);
      return true;
    }

    /** The draft slot of a new draft version; a stale slot (its version since published) is replaced. */
    async function claimSlot(slots: "skillDraftSlots" | "agentDraftSlots", parentId: string, versionId: string) {
      const doc = { _id: parentId, versionId, createdAt: at };
      const stale = await c[slots].findOne({ _id: parentId });
      if (stale) p.updates.push({ collection: slots, doc, before: stale as unknown as Record<string, unknown> });
      else insert(slots, doc);
    }

    function checkAliasesInto(vField: string, given: readonly string[]): string[] {
      let aliases: string[] = [];
      sub(vField, (s) => {
        aliases = checkAliases(s, "promptComposition", given);
      });
      return aliases;
    }

    // Agents
    for (const [i, ag] of bundle.agents.entries()) {
      const opened = await openVersioned<AgentDoc, AgentVersionDoc>("agent", i, ag);
      if (!opened) continue;
      const { field, m, id: agentId } = opened;
      for (const [j, v] of ag.versions.entries()) {
        if (!m.create.includes(v.version)) continue;
        const vField = fieldPath(fieldPath(field, "versions"), j);
        const workflow = await rewriteWorkflow(v.workflow, fieldPath(vField, "workflow"));
        if (Object.keys(workflow).length > 0) {
          const shape = parseWorkflow(workflow).issues;
          for (const d of workflowDetails(shape)) issues.add(fieldPath(vField, d.field), d.issue);
        }
        const id = mapNew(v.id, "av");
        insert("agentVersions", {
          _id: id,
          agentId,
          organizationId,
          version: v.version,
          status: v.status,
          workflow: JSON.stringify(workflow),
          createdAt: new Date(v.createdAt),
          updatedAt: toDate(v.publishedAt) ?? new Date(v.createdAt),
          publishedAt: toDate(v.publishedAt),
        } satisfies AgentVersionDoc);
        if (v.status === "draft") await claimSlot("agentDraftSlots", agentId, id);
      }
      await closeVersioned("agent", ag, opened);
    }

    /** A workflow with every step ref's ids (and pinned version ids) rewritten to ids here. */
    async function rewriteWorkflow(workflow: Record<string, unknown>, field: string): Promise<JsonObject> {
      const steps = workflow.steps;
      if (!Array.isArray(steps)) return workflow as JsonObject;
      const collections = {
        prompt: ["prompts", "promptVersions"],
        skill: ["skills", "skillVersions"],
        tool: ["tools", "toolVersions"],
      } as const;
      const rewritten = [];
      for (const [k, step] of steps.entries()) {
        const type = (step as { type?: unknown })?.type;
        const ref = (step as { ref?: unknown })?.ref;
        if (
          typeof type !== "string" ||
          !Object.hasOwn(REF_KEYS, type) ||
          typeof ref !== "object" ||
          ref === null ||
          Array.isArray(ref)
        ) {
          rewritten.push(step);
          continue;
        }
        const keys = REF_KEYS[type as keyof typeof REF_KEYS];
        const [parents, versions] = collections[type as keyof typeof collections];
        const refField = fieldPath(fieldPath(fieldPath(field, "steps"), k), "ref");
        const newRef: Record<string, unknown> = { ...(ref as Record<string, unknown>) };
        const id = newRef[keys.id];
        if (typeof id === "string") newRef[keys.id] = await refer(parents, id, fieldPath(refField, keys.id));
        const versionId = newRef[keys.version];
        if (typeof versionId === "string")
          newRef[keys.version] = await refer(versions, versionId, fieldPath(refField, keys.version));
        rewritten.push({ ...(step as object), ref: newRef });
      }
      return { ...workflow, steps: rewritten } as JsonObject;
    }

    issues.throwIfAny("the bundle is invalid");
    return p;
  }

  function changed(
    item: Omit<ImportItem, "outcome" | "id">,
    id: string,
    created: number,
    published: number,
    moved: number,
  ): ImportItem {
    const parts = [
      created > 0 && `${created} new version(s)`,
      published > 0 && `${published} version(s) published`,
      moved > 0 && `${moved} label(s) moved`,
    ].filter(Boolean);
    return parts.length === 0
      ? { ...item, id, outcome: "skipped" }
      : { ...item, id, outcome: "updated", detail: parts.join(", ") };
  }

  // ---------------------------------------------------------------- import: applying and undoing

  async function undo(journal: ImportDoc): Promise<void> {
    for (const step of [...journal.undo].reverse()) {
      const col = c[step.collection] as unknown as {
        deleteOne(f: object): Promise<unknown>;
        replaceOne(f: object, d: object, o: object): Promise<unknown>;
      };
      if (step.before === null) await col.deleteOne({ _id: step.id });
      else await col.replaceOne({ _id: step.id }, step.before, { upsert: true });
    }
    await c.importMap.deleteMany({ importId: journal._id });
    await c.imports.updateOne({ _id: journal._id }, { $set: { status: "undone", updatedAt: deps.now() } });
    for (const id of journal.touched.prompts) deps.live.forgetPrompt(id);
    for (const id of journal.touched.skills) deps.live.forgetSkill(id);
  }

  async function apply(organizationId: string, importId: string, p: Plan): Promise<void> {
    const at = deps.now();
    const journal: ImportDoc = {
      _id: importId,
      organizationId,
      status: "applying",
      undo: [
        ...p.inserts.map((i): UndoStep => ({ collection: i.collection, id: i.doc._id, before: null })),
        ...p.updates.map((u): UndoStep => ({ collection: u.collection, id: u.doc._id, before: u.before })),
      ],
      labelMoveIds: p.labelMoves.map((m) => m._id),
      touched: p.touched,
      createdAt: at,
      updatedAt: at,
    };
    await c.imports.insertOne(journal);
    try {
      const entries = [...p.mapped].map(([sourceId, targetId]) => ({
        _id: `${organizationId}/${sourceId}`,
        organizationId,
        targetId,
        importId,
      }));
      if (entries.length > 0) {
        try {
          await c.importMap.insertMany(entries);
        } catch (e) {
          if (!isDuplicateKeyError(e)) throw e;
          throw failedPrecondition("another import of this bundle is under way; try again when it has finished");
        }
      }
      const unordered = p.inserts.find((i) => !INSERT_ORDER.includes(i.collection));
      if (unordered)
        throw new Error(`an import inserts into ${unordered.collection}, which INSERT_ORDER does not list`);
      // Collection by collection (a thing's versions before the thing, as creating it does, so a
      // visible thing has its versions), in plan order within each, a few hundred at a time.
      for (const collection of INSERT_ORDER) {
        const docs = p.inserts.filter((i) => i.collection === collection).map((i) => i.doc);
        const col = c[collection] as unknown as { insertMany(d: object[]): Promise<void> };
        for (let at = 0; at < docs.length; at += INSERT_BATCH) await col.insertMany(docs.slice(at, at + INSERT_BATCH));
      }
      for (const u of p.updates) {
        const col = c[u.collection] as unknown as {
          deleteOne(f: object): Promise<unknown>;
          replaceOne(f: object, d: object): Promise<unknown>;
        };
        if ((u.doc as { deleted?: boolean }).deleted) await col.deleteOne({ _id: u.doc._id });
        else await col.replaceOne({ _id: u.doc._id }, u.doc);
      }
      for (const id of p.touched.prompts) deps.live.forgetPrompt(id);
      for (const id of p.touched.skills) deps.live.forgetSkill(id);
      await c.imports.updateOne({ _id: importId }, { $set: { status: "applied", updatedAt: deps.now() } });
    } catch (e) {
      try {
        await undo(journal);
      } catch (undoError) {
        options.logger?.error({ err: undoError, importId }, "undoing a failed import failed; the sweep will try again");
      }
      throw e;
    }
  }

  const authorizeImport = (principal: Principal, organizationId: string) =>
    authorize(principal, organizationId, [
      SCOPES.toolsWrite,
      SCOPES.promptsWrite,
      SCOPES.skillsWrite,
      SCOPES.agentsWrite,
    ]);

  return {
    exportBundle,

    /**
     * Plans an import and, unless `dryRun`, applies the catalog's part of it. The caller imports
     * the evaluation cases next and then calls `finishImport` (commit, or undo when they failed).
     */
    async importBundle(
      principal: Principal,
      input: { organizationId: string; bundleJson: string; dryRun: boolean },
    ): Promise<ImportPlanResult> {
      await authorizeImport(principal, input.organizationId);
      const bundle = parseBundle(input.bundleJson);
      const p = await plan(principal, input.organizationId, bundle);
      // Publishing and moving labels in an import takes what moving them takes (docs/labels.md).
      const kinds = [
        ["prompt", SCOPES.promptsWrite],
        ["skill", SCOPES.skillsWrite],
        ["agent", SCOPES.agentsWrite],
      ] as const;
      for (const label of p.movedLabels) {
        for (const [kind] of kinds) {
          await deps.access.moveLabel(principal, input.organizationId, SCOPES.labelsWrite, kind, label);
        }
      }
      const importId = newId("imp");
      const skills = bundle.skills.map((s): SkillMapping => {
        const id = p.ids.get(s.id) ?? "";
        return { sourceId: s.id, id, created: p.mapped.has(s.id) };
      });
      if (!input.dryRun) {
        if (p.conflicts.length > 0) {
          throw failedPrecondition("the bundle conflicts with this organization; nothing was imported", p.conflicts);
        }
        await apply(input.organizationId, importId, p);
      }
      return { importId: input.dryRun ? "" : importId, items: p.items, skills: skills.filter((s) => s.id !== "") };
    },

    /** Commits an applied import (its events go out), or undoes it. */
    async finishImport(principal: Principal, input: { organizationId: string; importId: string; commit: boolean }) {
      await authorizeImport(principal, input.organizationId);
      const journal = await c.imports.findOne({ _id: input.importId, organizationId: input.organizationId });
      if (!journal) throw notFound("import");
      if (!input.commit) {
        if (journal.status === "committed") throw failedPrecondition("the import is committed");
        if (journal.status !== "undone") await undo(journal);
        return;
      }
      if (journal.status === "committed") return;
      if (journal.status !== "applied") throw failedPrecondition(`the import is ${journal.status}`);
      const done = await c.imports.findOneAndUpdate(
        { _id: journal._id, status: "applied" },
        { $set: { status: "committed", updatedAt: deps.now(), undo: [] } },
      );
      if (!done) throw new DomainError("unavailable", "the import changed concurrently; retry");
      const moves =
        journal.labelMoveIds.length > 0 ? await c.labelMoves.find({ _id: { $in: journal.labelMoveIds } }) : [];
      for (const move of moves.sort((a, b) => a._id.localeCompare(b._id))) await deps.events.labelMoved(move);
    },

    /**
     * Where an import stands ("unknown" when there is none): the evaluation service asks it of
     * cases stored for an import whose gateway never said how it ended.
     */
    async getImport(principal: Principal, input: { organizationId: string; importId: string }): Promise<string> {
      await deps.access.inOrganization(principal, input.organizationId, SCOPES.skillsRead);
      const journal = await c.imports.findOne({ _id: input.importId, organizationId: input.organizationId });
      return journal?.status ?? "unknown";
    },

    /** Undoes imports whose caller stopped before finishing them. */
    sweep,
  };

  async function sweep(): Promise<number> {
    const before = new Date(deps.now().getTime() - staleAfterMs);
    const stale = await c.imports.find({ status: { $in: ["applying", "applied"] }, updatedAt: { $lt: before } });
    for (const journal of stale) {
      options.logger?.warn({ importId: journal._id }, "undoing an import its caller left unfinished");
      await undo(journal);
    }
    return stale.length;
  }
}

function toDate(value: string | null | undefined): Date | null {
  return value ? new Date(value) : null;
}
