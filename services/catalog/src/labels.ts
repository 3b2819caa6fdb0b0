/**
 * Labels: named pointers to versions of a prompt, skill or agent (docs/labels.md).
 *
 * - `production` IS the live published version: it is derived from the versions as the run path
 *   derives it (domain/versions.ts), never stored beside them, so the two cannot disagree. Moving
 *   it publishes the version (a draft) or makes an already published one live again; publishing
 *   moves it (the publish use cases record the move here).
 * - `latest` is the newest version, derived too, and read-only.
 * - Every other label is a document, and every move of any label is kept in `label_moves`.
 * - A prompt label may carry a default TTL for the response cache, kept on the prompt
 *   (label-cache-ttl.ts) and set or cleared by the move that names it.
 */

import { LATEST, labelNameIssue, PRODUCTION } from "@kiln/contracts/labels";
import { failedPrecondition, invalidArgument, notFound } from "@kiln/kit/errors";
import { findPage } from "@kiln/kit/pagination";
import type { Principal } from "@kiln/kit/principal";
import { isDuplicateKeyError } from "@kiln/kit/store";
import { SCOPES } from "./access.js";
import type { CatalogDeps } from "./catalog-deps.js";
import { livePublishedVersion } from "./domain/versions.js";
import { applyLabelTtl, checkLabelTtlChange, type LabelTtlChange, labelTtlOf } from "./label-cache-ttl.js";
import { checkParentIds, labelReads } from "./label-reads.js";
import { type LabelView, labelView } from "./label-view.js";
import { createPromptIncludes } from "./prompt-include-check.js";
import type { LabelDoc, LabelKind, LabelMoveDoc, PromptDoc, PromptVersionDoc } from "./store/catalog-store.js";
import { actorOf, labelId, recordLabelMove, recordPublish } from "./versioned/label-moves.js";
import {
  type AnyParent,
  type AnyVersion,
  type LabelledFamily,
  labelledFamilies,
  labelledFamilyOf,
  type Publishers,
} from "./versioned/labelled-families.js";
import { versionSummaries } from "./versioned/version-store.js";

export type Labels = ReturnType<typeof createLabels>;

export function createLabels(deps: CatalogDeps, publishers: Publishers) {
  const c = deps.collections;
  const families = labelledFamilies(deps, publishers);
  const familyOf = (kind: string) => labelledFamilyOf(families, kind);
  const includes = createPromptIncludes(deps);

  function checkLabel(label: string, field = "label"): void {
    const issue = labelNameIssue(label);
    if (issue) throw invalidArgument(`invalid label "${label}"`, [{ field, issue }]);
  }

  async function parentOf(kind: string, parentId: string) {
    const family = familyOf(kind);
    if (parentId === "") throw invalidArgument("parentId is required", [{ field: "parentId", issue: "is required" }]);
    const parent = await family.parents.findOne({ _id: parentId });
    if (!parent) throw notFound(kind);
    return { family, parent };
  }

  const versionsOf = (family: LabelledFamily, parentId: string) =>
    versionSummaries(family.versions, { [family.parentField]: parentId });
  const { labelsOf, labelsOfMany } = labelReads(deps);

  /** The labels of many parents of one kind and one organization (a parent elsewhere is not found). */
  async function listMany(
    principal: Principal,
    kind: string,
    input: { parentId: string; parentIds?: readonly string[] },
  ): Promise<LabelView[]> {
    const family = familyOf(kind);
    const ids = [...new Set(input.parentIds)];
    checkParentIds(input.parentId, ids);
    const parents = await family.parents.find(
      { _id: { $in: ids } },
      { projection: { _id: 1, organizationId: 1, labelCacheTtlSeconds: 1 } },
    );
    const organizationId = parents[0]?.organizationId;
    const ordered = ids.map((id) => parents.find((p) => p._id === id && p.organizationId === organizationId));
    if (ordered.includes(undefined) || organizationId === undefined) throw notFound(family.kind);
    const protectedLabels = await deps.access.protectedLabels(principal, organizationId, family.read, family.kind);
    const labels = await labelsOfMany(family.kind, family, ordered as AnyParent[], protectedLabels);
    return ids.flatMap((id) => labels.get(id) ?? []);
  }

  const readOnly = () =>
    invalidArgument("the label latest is read-only: it is always the newest version", [
      { field: "label", issue: "is read-only" },
    ]);

  /** Moves production to `version`: publishes a draft, or makes an older published version live again. */
  async function promote(
    principal: Principal,
    family: LabelledFamily & { kind: LabelKind },
    parent: AnyParent,
    _label: string,
    version: AnyVersion,
  ): Promise<void> {
    const live = livePublishedVersion(await versionsOf(family, parent._id));
    if (live?._id === version._id) return;
    // Publishing records the move (and checks what publishing checks).
    if (version.status === "draft") return void (await family.publish(principal, parent._id, version._id));
    const at = deps.now();
    const moved = await family.versions.findOneAndUpdate(
      { _id: version._id, status: "published" },
      { $set: { publishedAt: at } },
    );
    if (!moved) throw failedPrecondition("the version changed while it was being promoted; retry");
    family.forget(parent._id);
    await recordPublish(deps, principal, family.kind, parent, version, live, at, "moved");
  }

  /** Points a stored label at `version`, recording the move unless it already pointed there. */
  async function moveStored(
    principal: Principal,
    family: LabelledFamily & { kind: LabelKind },
    parent: AnyParent,
    label: string,
    version: AnyVersion,
  ): Promise<void> {
    const { kind } = family;
    const id = labelId(kind, parent._id, label);
    const at = deps.now();
    const by = actorOf(principal);
    const move = () =>
      c.labels.findOneAndUpdate(
        { _id: id },
        {
          $set: { versionId: version._id, updatedAt: at, updatedBy: by },
          $setOnInsert: { organizationId: parent.organizationId, kind, parentId: parent._id, label },
        },
        { upsert: true, returnDocument: "before" },
      );
    // Two first moves at once: one inserts, the other (a duplicate key) updates what it inserted.
    const previous = await move().catch((e: unknown) => {
      if (isDuplicateKeyError(e)) return move();
      throw e;
    });
    if (previous?.versionId === version._id) return;
    await recordLabelMove(deps, {
      organizationId: parent.organizationId,
      kind,
      parentId: parent._id,
      label,
      versionId: version._id,
      version: version.version,
      previousVersionId: previous?.versionId ?? null,
      action: "moved",
      at,
      by,
    });
  }

  return {
    /**
     * Every label of one parent (`parentId`), or of each of `parentIds` (at most 100, of one
     * organization; a repeated id answered once), parent after parent, in a bounded number of reads.
     */
    async listLabels(
      principal: Principal,
      input: { kind: string; parentId: string; parentIds?: readonly string[] },
    ): Promise<LabelView[]> {
      if (input.parentIds && input.parentIds.length > 0) return listMany(principal, input.kind, input);
      const { family, parent } = await parentOf(input.kind, input.parentId);
      const protectedLabels = await deps.access.protectedLabels(
        principal,
        parent.organizationId,
        family.read,
        family.kind,
      );
      return labelsOf(family.kind, family, parent, protectedLabels);
    },

    /**
     * Points `label` at `versionId`. `production`: a draft is published (the family's publish, with
     * its checks); an older published version becomes the live one again (its `publishedAt` is
     * now). Moving a label where it already points changes nothing and records nothing. A prompt
     * label's response-cache default is then set or cleared when the request says so.
     */
    async setLabel(
      principal: Principal,
      input: { kind: string; parentId: string; label: string; versionId: string } & LabelTtlChange,
    ): Promise<LabelView> {
      const { family, parent } = await parentOf(input.kind, input.parentId);
      const kind = family.kind;
      checkLabel(input.label);
      if (input.label === LATEST) throw readOnly();
      if (input.versionId === "")
        throw invalidArgument("versionId is required", [{ field: "versionId", issue: "is required" }]);
      checkLabelTtlChange(kind, input);
      await deps.access.moveLabel(principal, parent.organizationId, SCOPES.labelsWrite, kind, input.label);
      const version = await family.versions.findOne({ _id: input.versionId, [family.parentField]: parent._id });
      if (!version) throw notFound(`${kind} version`);
      // A prompt label points runs of the prompts that include it at the version: no cycle may
      // come of it (api.md "Partials"; publishing a draft checks it itself).
      if (kind === "prompt" && !(input.label === PRODUCTION && version.status === "draft")) {
        await includes.check(parent as PromptDoc, version as unknown as PromptVersionDoc, "move");
      }
      await (input.label === PRODUCTION ? promote : moveStored)(principal, family, parent, input.label, version);
      const now = kind === "prompt" ? await applyLabelTtl(deps, parent as PromptDoc, input.label, input) : parent;
      if (now !== parent) family.forget(parent._id);
      const protectedLabels = await deps.access.protectedLabels(principal, parent.organizationId, family.read, kind);
      const found = (await labelsOf(kind, family, now, protectedLabels)).find((l) => l.label === input.label);
      if (!found) throw new Error(`label ${input.label} vanished after it was set`);
      return found;
    },

    /** Removes a label; `production` and `latest` cannot be removed. Answers the label as it was. */
    async deleteLabel(principal: Principal, input: { kind: string; parentId: string; label: string }) {
      const { family, parent } = await parentOf(input.kind, input.parentId);
      const kind = family.kind;
      checkLabel(input.label);
      if (input.label === LATEST) throw readOnly();
      await deps.access.moveLabel(principal, parent.organizationId, SCOPES.labelsWrite, kind, input.label);
      if (input.label === PRODUCTION) {
        throw failedPrecondition("the label production is the published version: it moves, it is never removed", [
          { field: "label", issue: "cannot be removed" },
        ]);
      }
      const removed = await c.labels.findOne({ _id: labelId(kind, parent._id, input.label) });
      const { deletedCount } = removed
        ? await c.labels.deleteOne({ _id: removed._id, versionId: removed.versionId })
        : { deletedCount: 0 };
      if (!removed || deletedCount === 0) throw notFound(`label ${input.label}`);
      // A label made again later starts without the default this one had.
      const ttl = labelTtlOf(parent, input.label);
      if (ttl !== undefined) {
        await applyLabelTtl(deps, parent as PromptDoc, input.label, { clearCacheTtlSeconds: true });
        family.forget(parent._id);
      }
      const version = await family.versions.findOne({ _id: removed.versionId });
      await recordLabelMove(deps, {
        organizationId: parent.organizationId,
        kind,
        parentId: parent._id,
        label: input.label,
        versionId: null,
        version: null,
        previousVersionId: removed.versionId,
        action: "deleted",
        by: actorOf(principal),
      });
      const protectedLabels = await deps.access.protectedLabels(principal, parent.organizationId, family.read, kind);
      const at = deps.now();
      if (!version) throw notFound(`${kind} version`);
      return labelView(kind, parent._id, input.label, version, at, actorOf(principal), protectedLabels, ttl);
    },

    /**
     * Every move of one label, newest first. `latest` moves when a version is created, so its
     * history is the versions, newest first.
     */
    async listLabelHistory(
      principal: Principal,
      input: { kind: string; parentId: string; label: string; limit: number; cursor: string },
    ): Promise<{ items: LabelMoveDoc[]; nextCursor: string }> {
      const { family, parent } = await parentOf(input.kind, input.parentId);
      const kind = family.kind;
      checkLabel(input.label);
      await deps.access.onResource(principal, parent.organizationId, family.read, kind);
      if (input.label === LATEST) {
        const page = await findPage(family.versions, { [family.parentField]: parent._id }, input);
        return {
          items: page.items.map((v) => ({
            _id: v._id,
            organizationId: parent.organizationId,
            kind,
            parentId: parent._id,
            label: LATEST,
            versionId: v._id,
            version: v.version,
            previousVersionId: null,
            action: "moved",
            at: v.createdAt,
            by: "",
          })),
          nextCursor: page.nextCursor,
        };
      }
      return findPage(c.labelMoves, { kind, parentId: parent._id, label: input.label }, input);
    },

    /**
     * The version a label points at, for a run (resolve.ts); not_found naming the label when it
     * does not exist. `production` is not answered here: runs resolve it as the live version.
     */
    async versionIdOf(kind: LabelKind, parentId: string, label: string): Promise<string> {
      const family = families[kind];
      if (label === LATEST) {
        const [latest] = await family.versions.find(
          { [family.parentField]: parentId },
          { sort: { version: -1 }, limit: 1 },
        );
        if (!latest) throw notFound(`label ${label}`);
        return latest._id;
      }
      const doc: LabelDoc | null = await c.labels.findOne({ _id: labelId(kind, parentId, label) });
      if (!doc) throw notFound(`label ${label}`);
      return doc.versionId;
    },
  };
}
