import type { ImportItem } from "@kiln/contracts/bundle";
import { PRODUCTION } from "@kiln/contracts/labels";
import { LIMITS } from "@kiln/kit/limits";
import { fieldPath } from "../../domain/issues.js";
import type { LabelKind } from "../../store/catalog-store.js";
import { KINDS, type KindSpec, slotsOf, type Versioned } from "../shared.js";
import type { PlanContext } from "./context.js";
import { labelPlanner } from "./labels.js";

/** What prompts, skills and agents share in a plan: opening a thing (its fields, its match here) and closing it. */
export function versionedPlanner(ctx: PlanContext) {
  const { c, p, organizationId, at, sub, checkNumbering, checkLabels, drafts, existing, matchVersions } = ctx;
  const { conflict, mapNew, keepId, insert } = ctx;
  const { planLabels, planPublishes } = labelPlanner(ctx);
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

  /**
   * Plans each bundle thing of a kind: opened (`onOpen` sees what it matched here), each of its new
   * versions planned by `planVersion` (which answers the new version's id; a new draft claims the
   * kind's draft slot), closed with the thing's `extra` fields.
   */
  async function planEach<
    P extends { _id: string; name: string },
    V extends { _id: string; version: number; status: "draft" | "published"; publishedAt: Date | null },
    T extends Parameters<typeof openVersioned>[2] & { createdAt: string; versions: readonly unknown[] },
  >(
    kind: LabelKind,
    things: readonly T[],
    plan: {
      onOpen?: (thing: T, opened: Opened<P, V>) => void;
      planVersion: (thing: T, version: T["versions"][number], field: string, parentId: string) => Promise<string>;
      extra?: (thing: T) => Record<string, unknown>;
    },
  ): Promise<void> {
    const slots = slotsOf(KINDS[kind]);
    for (const [i, thing] of things.entries()) {
      const opened = await openVersioned<P, V>(kind, i, thing);
      if (!opened) continue;
      plan.onOpen?.(thing, opened);
      for (const [j, version] of thing.versions.entries()) {
        if (!opened.m.create.includes(version.version)) continue;
        const id = await plan.planVersion(thing, version, fieldPath(fieldPath(opened.field, "versions"), j), opened.id);
        if (slots && version.status === "draft") await claimSlot(slots, opened.id, id);
      }
      await closeVersioned(kind, thing, opened, plan.extra?.(thing));
    }
  }

  return { planEach };
}

/** A bundle thing opened: its field, the thing here (if any) and its versions matched. */
type Opened<P, V> = {
  field: string;
  here: (P & { organizationId: string }) | null | undefined;
  m: { create: number[]; keep: Map<number, V> };
  id: string;
};
