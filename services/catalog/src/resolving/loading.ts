/**
 * The reads every resolve use case shares: version documents through the version cache, the
 * live published version, label targets and pinned tools, each collection read at most once.
 */

import { LATEST, PRODUCTION } from "@kiln/contracts/labels";
import { type FieldIssue, failedPrecondition, notFound } from "@kiln/kit/errors";
import type { Collection } from "@kiln/kit/store";
import type { CatalogDeps } from "../catalog-deps.js";
import { fieldPath } from "../domain/issues.js";
import type { ToolPin } from "../domain/tool-pins.js";
import { LIVE_PUBLISHED_SORT } from "../domain/versions.js";
import type { LabelKind, PromptVersionDoc, SkillVersionDoc, ToolDoc, ToolVersionDoc } from "../store/catalog-store.js";
import type { ImmutableVersion, VersionCache } from "../version-cache.js";
import { labelId } from "../versioned/label-moves.js";
import type { ResolvedToolView } from "./views.js";

export interface LoadedTools {
  versions: Map<string, ToolVersionDoc>;
  tools: Map<string, ToolDoc>;
}

export const NO_TOOLS: LoadedTools = { versions: new Map(), tools: new Map() };

export const unique = (values: Iterable<string>) => [...new Set(values)];

/** What a resolve names: a version, a label, or neither (the live published version). */
export interface VersionRequest {
  organizationId: string;
  versionId: string;
  label?: string;
}

/**
 * What a request whose version was not found (or not in its organization) is answered with: the
 * label or version named is not found; without either, there is no published version.
 */
export function notSelected(kind: LabelKind, input: VersionRequest): never {
  const label = input.label ?? "";
  if (label !== "") throw notFound(`label ${label}`);
  if (input.versionId !== "") throw notFound(`${kind} version`);
  throw failedPrecondition(`${kind} has no published version`, [
    { field: "versionId", issue: `is required: the ${kind} has no published version` },
  ]);
}

export type Loading = ReturnType<typeof createLoading>;

export function createLoading(deps: CatalogDeps, cache: VersionCache) {
  const c = deps.collections;

  /** Version documents by id: cached ones from the cache, the rest with one query. */
  async function versionsById<T extends ImmutableVersion>(
    collection: Collection<T>,
    ids: Iterable<string>,
  ): Promise<Map<string, T>> {
    const found = new Map<string, T>();
    const missing: string[] = [];
    for (const id of unique(ids)) {
      const hit = cache.get<T>(collection.name, id);
      if (hit) found.set(id, hit);
      else missing.push(id);
    }
    if (missing.length > 0) {
      for (const doc of await collection.find({ _id: { $in: missing } })) {
        cache.remember(collection.name, doc);
        found.set(doc._id, doc);
      }
    }
    return found;
  }

  /** The live published version of a parent, with one query that reads only that version. */
  async function livePublished<T extends PromptVersionDoc | SkillVersionDoc>(
    collection: Collection<T>,
    parent: { promptId: string } | { skillId: string },
  ): Promise<T | undefined> {
    const [live] = await collection.find({ ...parent, status: "published" }, { sort: LIVE_PUBLISHED_SORT, limit: 1 });
    if (live) cache.remember(collection.name, live);
    return live;
  }

  /**
   * Whether `input` names a label other than production (which is the live version) and the
   * version it points at, null when there is no such label (the caller says so once it knows the
   * parent is visible).
   */
  async function labelled(kind: LabelKind, parentId: string, input: VersionRequest) {
    const label = input.label ?? "";
    const viaLabel = label !== "" && label !== PRODUCTION;
    return { viaLabel, labelled: viaLabel ? await labelTarget(kind, parentId, label) : null };
  }

  /** The version a label other than production points at, or null; `latest` is the newest version. */
  async function labelTarget(kind: LabelKind, parentId: string, label: string): Promise<string | null> {
    if (label === LATEST) {
      const collection = { prompt: c.promptVersions, skill: c.skillVersions, agent: c.agentVersions }[
        kind
      ] as Collection<{
        _id: string;
        version: number;
      }>;
      const field = { prompt: "promptId", skill: "skillId", agent: "agentId" }[kind];
      const [latest] = await collection.find({ [field]: parentId }, { sort: { version: -1 }, limit: 1 });
      return latest?._id ?? null;
    }
    const doc = await c.labels.findOne({ _id: labelId(kind, parentId, label) });
    return doc?.versionId ?? null;
  }

  /** The pinned tool versions (cached or one query) and their tools (one query), in parallel. */
  async function loadTools(pins: readonly ToolPin[]): Promise<LoadedTools> {
    if (pins.length === 0) return NO_TOOLS;
    const [versions, tools] = await Promise.all([
      versionsById(
        c.toolVersions,
        pins.map((p) => p.toolVersionId),
      ),
      c.tools.find({ _id: { $in: unique(pins.map((p) => p.toolId)) } }),
    ]);
    return { versions, tools: new Map(tools.map((t) => [t._id, t])) };
  }

  function toolsOf(
    pins: readonly ToolPin[],
    loaded: LoadedTools,
    organizationId: string,
    field: string,
    problems: FieldIssue[],
  ): ResolvedToolView[] {
    const resolved: ResolvedToolView[] = [];
    pins.forEach((pin, i) => {
      const version = loaded.versions.get(pin.toolVersionId);
      const tool = loaded.tools.get(pin.toolId);
      if (
        !version ||
        !tool ||
        version.toolId !== pin.toolId ||
        version.organizationId !== organizationId ||
        tool.organizationId !== organizationId
      ) {
        problems.push({
          field: fieldPath(fieldPath(field, i), "toolVersionId"),
          issue: `tool version ${pin.toolVersionId} no longer exists`,
        });
      } else resolved.push({ pin, description: tool.description, version });
    });
    return resolved;
  }

  function unresolvable(what: string, problems: FieldIssue[]) {
    problems.sort((a, b) => a.field.localeCompare(b.field, "en", { numeric: true }));
    return failedPrecondition(`${what} does not resolve: something it pins no longer exists`, problems);
  }

  return { versionsById, livePublished, labelled, labelTarget, loadTools, toolsOf, unresolvable };
}
