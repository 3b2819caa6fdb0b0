/**
 * The portable subset of docs/architecture.md "Store backends", checked before any data reaches a backend. Both backends
 * call these guards, so a document, filter or update that FerretDB 1.24 would refuse fails the same
 * way in memory, on FerretDB and on MongoDB. Checking on the client also matters on FerretDB itself:
 * it drops the connection (no error reply) when a message holds NaN.
 */
import type { Filter, IndexSpec, Sort, Update } from "./store.js";

const LOGICAL_OPERATORS = new Set(["$and", "$or", "$nor"]);
const FIELD_OPERATORS = new Set([
  "$eq",
  "$ne",
  "$gt",
  "$gte",
  "$lt",
  "$lte",
  "$in",
  "$nin",
  "$not",
  "$exists",
  "$type",
  "$regex",
  "$options",
  "$all",
  "$elemMatch",
  "$size",
  "$mod",
  "$bitsAllSet",
  "$bitsAnySet",
  "$bitsAllClear",
  "$bitsAnyClear",
]);
const UPDATE_OPERATORS = new Set([
  "$set",
  "$unset",
  "$inc",
  "$min",
  "$max",
  "$mul",
  "$rename",
  "$currentDate",
  "$setOnInsert",
  "$push",
  "$addToSet",
  "$pop",
  "$pull",
  "$pullAll",
  "$bit",
]);

function refuse(what: string): never {
  throw new Error(`not portable: ${what} (see docs/architecture.md "Store backends")`);
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** A plain object whose keys are operators (`{ $gt: 1 }`), as opposed to a literal subdocument. */
function isOperatorObject(value: unknown): value is Record<string, unknown> {
  return isPlainObject(value) && Object.keys(value).some((k) => k.startsWith("$"));
}

function join(path: string, key: string | number): string {
  return path ? `${path}.${key}` : String(key);
}

function assertPortableKey(key: string, path: string): void {
  const where = `key "${key}"${path ? ` in "${path}"` : ""}`;
  if (key.includes(".")) refuse(`${where} contains "." (store free-form JSON with encodeJson)`);
  if (key.startsWith("$")) refuse(`${where} starts with "$" (store free-form JSON with encodeJson)`);
  if (key.includes("\0")) refuse(`${where} contains a NUL character`);
}

/** Refuses values FerretDB cannot store: NaN/±Infinity, NUL in strings, nested arrays, odd keys, Decimal128. */
export function assertPortableValue(value: unknown, path: string): void {
  if (typeof value === "number") {
    if (!Number.isFinite(value)) refuse(`${value} at "${path}"`);
  } else if (typeof value === "string") {
    if (value.includes("\0")) refuse(`string with a NUL character at "${path}"`);
  } else if (Array.isArray(value)) {
    value.forEach((item, i) => {
      if (Array.isArray(item)) refuse(`nested array at "${join(path, i)}"`);
      assertPortableValue(item, join(path, i));
    });
  } else if (isPlainObject(value)) {
    for (const [key, item] of Object.entries(value)) {
      assertPortableKey(key, path);
      assertPortableValue(item, join(path, key));
    }
  } else if (typeof value === "object" && value !== null && Reflect.get(value, "_bsontype") === "Decimal128") {
    refuse(`Decimal128 at "${path}"`);
  }
}

/** A document as stored: a string `_id` (store.ts `Doc`) and portable keys and values throughout. */
export function assertPortableDocument(doc: unknown): void {
  if (!isPlainObject(doc)) refuse("a document must be a plain object");
  if (typeof doc._id !== "string") refuse(`_id must be a string, got ${typeof doc._id}`);
  assertPortableValue(doc, "");
}

/** A dotted field path in a filter, update, sort, projection or index: no positional `$` parts. */
function assertPortablePath(path: string, role: string): void {
  for (const part of path.split(".")) {
    if (part === "") refuse(`empty part in the ${role} "${path}"`);
    if (part.startsWith("$")) refuse(`"${part}" in the ${role} "${path}" (positional and operator paths)`);
    if (part.includes("\0")) refuse(`NUL character in the ${role} "${path}"`);
  }
}

export function assertPortableFilter(filter: unknown, path = "filter"): asserts filter is Filter {
  if (!isPlainObject(filter)) refuse(`${path} must be a plain object`);
  for (const [key, value] of Object.entries(filter)) {
    if (key.startsWith("$")) {
      if (!LOGICAL_OPERATORS.has(key)) refuse(`query operator "${key}"`);
      if (!Array.isArray(value) || value.length === 0) refuse(`${key} needs a non-empty array`);
      value.forEach((clause, i) => {
        assertPortableFilter(clause, `${key}.${i}`);
      });
    } else {
      assertPortablePath(key, "field path");
      assertPortableCondition(value, key);
    }
  }
}

function assertPortableCondition(value: unknown, field: string): void {
  // An undefined value is sent as null by the driver and so matches every document missing the field.
  if (value === undefined) refuse(`undefined value for "${field}" in a filter`);
  if (!isOperatorObject(value)) {
    assertPortableValue(value, field);
    return;
  }
  for (const [op, operand] of Object.entries(value)) {
    if (!FIELD_OPERATORS.has(op)) refuse(`query operator "${op}" on "${field}"`);
    if (op === "$in" || op === "$nin" || op === "$all") {
      if (!Array.isArray(operand)) refuse(`${op} on "${field}" needs an array`);
      assertPortableValue(operand, field);
    } else if (op === "$not") {
      if (!isOperatorObject(operand) && !(operand instanceof RegExp)) refuse(`$not on "${field}" needs an operator`);
      assertPortableCondition(operand, field);
    } else if (op === "$elemMatch") {
      if (isOperatorObject(operand)) assertPortableCondition(operand, field);
      else assertPortableFilter(operand, `${field}.$elemMatch`);
    } else {
      assertPortableValue(operand, field);
    }
  }
}

export function assertPortableUpdate(update: unknown): asserts update is Update {
  if (!isPlainObject(update) || Object.keys(update).length === 0) refuse("an update needs at least one operator");
  const paths: string[] = [];
  for (const [op, fields] of Object.entries(update)) {
    if (!UPDATE_OPERATORS.has(op)) refuse(`update operator "${op}"`);
    if (!isPlainObject(fields) || Object.keys(fields).length === 0) refuse(`${op} needs an object of field paths`);
    for (const [path, value] of Object.entries(fields)) {
      assertPortablePath(path, `${op} path`);
      // `_id` is immutable; an upsert names it in the filter or in $setOnInsert.
      const touchesId = path === "_id" || (op === "$rename" && value === "_id");
      if (touchesId && op !== "$setOnInsert") refuse(`${op} on _id (set it with $setOnInsert when upserting)`);
      assertUpdateOperand(op, path, value);
      paths.push(path);
      if (op === "$rename" && typeof value === "string") paths.push(value);
    }
  }
  assertNoPathConflicts(paths);
}

function assertUpdateOperand(op: string, path: string, value: unknown): void {
  if (op === "$inc" || op === "$mul") {
    if (typeof value !== "number" || !Number.isFinite(value)) refuse(`${op} on "${path}" needs a finite number`);
  } else if (op === "$push" || op === "$addToSet") {
    if (isOperatorObject(value)) {
      // $position, $slice and $sort are only partly implemented by FerretDB 1.24.
      const modifiers = Object.keys(value);
      if (modifiers.length !== 1 || !Array.isArray(value.$each)) refuse(`${op} modifiers ${modifiers.join(", ")}`);
      assertPortableValue(value.$each, path);
    } else {
      if (Array.isArray(value)) refuse(`${op} of an array onto "${path}" makes a nested array`);
      assertPortableValue(value, path);
    }
  } else if (op === "$pull") {
    if (isOperatorObject(value)) assertPortableCondition(value, path);
    else if (isPlainObject(value)) assertPortableFilter(value, `${op}.${path}`);
    else assertPortableValue(value, path);
  } else if (op === "$pullAll") {
    if (!Array.isArray(value)) refuse(`$pullAll on "${path}" needs an array`);
    assertPortableValue(value, path);
  } else if (op === "$pop") {
    if (value !== 1 && value !== -1) refuse(`$pop on "${path}" needs 1 or -1`);
  } else if (op === "$rename") {
    if (typeof value !== "string") refuse(`$rename of "${path}" needs a string`);
    assertPortablePath(value, "$rename target");
  } else if (op === "$currentDate") {
    if (value !== true && !(isPlainObject(value) && value.$type === "date")) {
      refuse(`$currentDate on "${path}" other than true or { $type: "date" }`);
    }
  } else if (op !== "$unset") {
    assertPortableValue(value, path);
  }
}

/** MongoDB refuses one update touching a path twice, or a path and its parent (error 40). */
function assertNoPathConflicts(paths: string[]): void {
  paths.forEach((a, i) => {
    for (const b of paths.slice(i + 1)) {
      if (a === b || a.startsWith(`${b}.`) || b.startsWith(`${a}.`)) {
        throw new Error(`updating the path "${a}" would create a conflict at "${b}"`);
      }
    }
  });
}

export function assertPortableSort(sort: Sort): void {
  for (const [path, direction] of Object.entries(sort)) {
    assertPortablePath(path, "sort path");
    if (direction !== 1 && direction !== -1) refuse(`sort direction ${String(direction)} for "${path}"`);
  }
}

export function assertPortableProjection(projection: Record<string, 0 | 1>): void {
  const kinds = new Set<number>();
  for (const [path, flag] of Object.entries(projection)) {
    assertPortablePath(path, "projection path");
    if (flag !== 0 && flag !== 1) refuse(`projection value ${String(flag)} for "${path}"`);
    if (path !== "_id") kinds.add(flag);
  }
  if (kinds.size > 1) throw new Error("a projection cannot mix inclusion and exclusion (except for _id)");
}

export function assertPortableIndex(index: IndexSpec): void {
  const keys = Object.entries(index.keys);
  if (keys.length === 0) throw new Error("an index needs at least one key");
  for (const [path, direction] of keys) {
    assertPortablePath(path, "index key");
    if (direction !== 1 && direction !== -1) refuse(`index direction ${String(direction)} for "${path}"`);
  }
  const ttl = index.expireAfterSeconds;
  if (ttl !== undefined && (keys.length !== 1 || !Number.isInteger(ttl) || ttl < 0 || index.unique)) {
    // MongoDB's own rule: a TTL index has one key, a whole number of seconds, and is not unique.
    refuse(`TTL index on ${keys.map(([k]) => k).join(", ")}`);
  }
}

/**
 * The fields an upsert copies from its filter, as MongoDB does: top-level equalities (plain or `$eq`)
 * and those inside `$and`. `$or`/`$nor` and ranges contribute nothing.
 */
export function upsertSeed(filter: Filter): Record<string, unknown> {
  const seed: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(filter)) {
    if (key === "$and" && Array.isArray(value)) {
      for (const clause of value) if (isPlainObject(clause)) Object.assign(seed, upsertSeed(clause));
    } else if (key.startsWith("$") || value instanceof RegExp) {
      // no equality to copy
    } else if (isOperatorObject(value)) {
      if ("$eq" in value) seed[key] = value.$eq;
    } else {
      seed[key] = value;
    }
  }
  return seed;
}

/**
 * An upsert must insert a string `_id` (store.ts `Doc`): from the filter's equality on `_id` or from
 * `$setOnInsert`. Otherwise MongoDB and FerretDB would invent an ObjectId.
 */
export function upsertIdOf(filter: Filter, update: Update): string {
  const id = upsertSeed(filter)._id ?? update.$setOnInsert?._id;
  if (typeof id !== "string") refuse("an upsert needs a string _id from the filter or $setOnInsert");
  return id;
}
