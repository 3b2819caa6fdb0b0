/** Copies and comparisons of stored documents, through BSON as the servers see them. */
import { BSON } from "bson";
import type { Stored } from "./document-table.js";
import type { Doc } from "./store.js";

/** A copy with `_id` first, as the servers store it. */
export function toStored(doc: Doc): Stored {
  const { _id, ...rest } = doc;
  return clone({ _id, ...rest });
}

/**
 * Copies through BSON, as the driver would send and receive it: Dates and ObjectIds keep their
 * types, undefined becomes null, functions are dropped. `structuredClone` would strip BSON prototypes.
 */
export function clone<D extends object>(doc: D): D {
  return BSON.deserialize(BSON.serialize(doc, { ignoreUndefined: false })) as D;
}

export function sameDocument(a: Stored, b: Stored): boolean {
  return Buffer.from(BSON.serialize(a)).equals(BSON.serialize(b));
}
