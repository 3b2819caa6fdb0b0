/**
 * Applying and undoing an import. A real import writes a journal first (what to delete, what to put
 * back), then the map entries (a unique key per bundle id: two concurrent imports of one bundle
 * cannot both create), then the documents; a failure undoes the journal. FerretDB has no
 * transactions, so "whole or nothing" is this undo.
 */
import { failedPrecondition } from "@kiln/kit/errors";
import type { Logger } from "@kiln/kit/logger";
import { isDuplicateKeyError } from "@kiln/kit/store";
import type { CatalogDeps } from "../catalog-deps.js";
import type { ImportDoc, UndoStep } from "../store/catalog-store.js";
import { INSERT_BATCH, INSERT_ORDER, type Plan } from "./shared.js";

export function createJournal(deps: CatalogDeps, logger: Logger | undefined) {
  const c = deps.collections;

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
        logger?.error({ err: undoError, importId }, "undoing a failed import failed; the sweep will try again");
      }
      throw e;
    }
  }

  return { apply, undo };
}
