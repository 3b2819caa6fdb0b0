/**
 * The catalog's versioned families in one table: where each keeps its resources and versions (and
 * its one-draft slots), the field naming a version's resource, the scopes that read and write it
 * and the live cache a change evicts from. The use cases (resource.ts, cases.ts) and labels
 * (labelled-families.ts) are configured from it, so adding a family starts with one row here.
 */
import type { IdPrefix } from "@kiln/kit/ids";
import type { Collection } from "@kiln/kit/store";
import { SCOPES, type Scope } from "../access.js";
import type { CatalogDeps } from "../catalog-deps.js";
import type { ResourceDoc, VersionDoc } from "../store/catalog-store.js";

export type SlotCollection = Collection<{ _id: string; versionId: string; createdAt: Date }>;

/** How one family is kept and authorized. */
export interface FamilyStore<P extends ResourceDoc, V extends VersionDoc> {
  /** The resource's name in errors, access checks and labels ("prompt", "tool", "skill", "agent"). */
  noun: "prompt" | "tool" | "skill" | "agent";
  /** The id prefixes of a new resource and of a new version. */
  ids: { parent: IdPrefix; version: IdPrefix };
  parents: Collection<P>;
  versions: Collection<V>;
  /** The version field naming its resource ("promptId", ...). */
  parentField: "promptId" | "toolId" | "skillId" | "agentId";
  parentOf: (version: V) => string;
  read: Scope;
  write: Scope;
  /** Forgets the resource's cached live version, for the families the live cache holds. */
  forgetLive?: (parentId: string) => void;
  /**
   * The one-draft slots of the families whose drafts are edited in place (skills, agents): their
   * versions carry `updatedAt`, stamped on publish, and publishing releases the slot.
   */
  draftSlots?: SlotCollection;
}

export type FamilyNoun = FamilyStore<ResourceDoc, VersionDoc>["noun"];

/** A row of the table: the version field is `<noun>Id`, the scopes `<noun>s:read` and `<noun>s:write`. */
function row<
  N extends FamilyNoun,
  P extends ResourceDoc,
  V extends VersionDoc & Record<`${N}Id`, string>,
  M extends Pick<FamilyStore<P, V>, "forgetLive" | "draftSlots"> = Record<never, never>,
>(
  noun: N,
  ids: FamilyStore<P, V>["ids"],
  parents: Collection<P>,
  versions: Collection<V>,
  more?: M,
): FamilyStore<P, V> & { noun: N } & M {
  const parentField = `${noun}Id` as const;
  const parentOf = (v: V): string => v[parentField];
  const scopes = { read: SCOPES[`${noun}sRead`], write: SCOPES[`${noun}sWrite`] };
  return { noun, ids, parents, versions, parentField, parentOf, ...scopes, ...(more as M) };
}

export type FamilyStores = ReturnType<typeof familyStores>;

export function familyStores(deps: CatalogDeps) {
  const c = deps.collections;
  return {
    prompt: row("prompt", { parent: "prm", version: "pv" }, c.prompts, c.promptVersions, {
      forgetLive: (id: string) => deps.live.forgetPrompt(id),
    }),
    tool: row("tool", { parent: "tool", version: "tv" }, c.tools, c.toolVersions),
    skill: row("skill", { parent: "skl", version: "sv" }, c.skills, c.skillVersions, {
      forgetLive: (id: string) => deps.live.forgetSkill(id),
      draftSlots: c.skillDraftSlots,
    }),
    agent: row("agent", { parent: "agt", version: "av" }, c.agents, c.agentVersions, { draftSlots: c.agentDraftSlots }),
  };
}
