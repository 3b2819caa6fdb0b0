/**
 * What planning an import keeps while it walks the bundle: the writes planned so far, the map from
 * bundle ids to ids here, the problems found, and the helpers every kind's planner uses.
 */
import type { BundleToolPin, ImportItem } from "@kiln/contracts/bundle";
import { LATEST, labelNameIssue, PRODUCTION } from "@kiln/contracts/labels";
import { type IdPrefix, newId } from "@kiln/kit/ids";
import type { Principal } from "@kiln/kit/principal";
import type { CatalogDeps } from "../../catalog-deps.js";
import { fieldPath, Issues } from "../../domain/issues.js";
import type { ToolPin } from "../../domain/tool-pins.js";
import { livePublishedVersion } from "../../domain/versions.js";
import type { CatalogCollections, PromptVersionDoc } from "../../store/catalog-store.js";
import { actorOf, labelMoveDoc } from "../../versioned/label-moves.js";
import { type Plan, toDate, type Versioned } from "../shared.js";

export type PlanContext = ReturnType<typeof createPlanContext>;

export function createPlanContext(deps: CatalogDeps, principal: Principal, organizationId: string) {
  const c = deps.collections;
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

  return {
    deps,
    c,
    organizationId,
    at,
    actor,
    issues,
    p,
    promptVersions,
    promptNames,
    toolKeys,
    existing,
    refer,
    sub,
    checkNumbering,
    checkLabels,
    matchVersions,
    insert,
    mapNew,
    keepId,
    conflict,
    planMove,
    pinsOf,
    drafts,
  };
}
