import { randomFillSync } from "node:crypto";

/** Type prefixes of api.md "Conventions"; an id is `<prefix>_<32 hex>`, sortable by creation time. */
export type IdPrefix =
  | "org"
  | "usr"
  | "key"
  | "inv"
  | "prm"
  | "pv"
  | "tool"
  | "tv"
  | "skl"
  | "sv"
  | "agt"
  | "av"
  | "run"
  | "srun"
  | "arun"
  | "jrun"
  | "mrun"
  | "evc"
  | "evr"
  | "lbm"
  | "whk"
  | "imp"
  | "dlv"
  | "trc"
  | "olr"
  | "osc"
  | "req"
  | "anq"
  | "ani"
  | "dst"
  | "dsi"
  | "mrt"
  | "pcn"
  | "sct"
  | "grp"
  | "aud"
  | "bdg";

let lastMs = 0;
let counter = 0;

/**
 * Random bits drawn 4 KiB at a time: one `randomBytes(8)` per id cost a call into the system's
 * generator per request (2 % of a run's CPU under load), one fill now serves 512 ids.
 */
const pool = Buffer.alloc(4096);
let poolAt = pool.length;

function randomHex8(): string {
  if (poolAt + 8 > pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  const hex = pool.toString("hex", poolAt, poolAt + 8);
  poolAt += 8;
  return hex;
}

/**
 * 48 bits of milliseconds, a 16-bit counter within the millisecond (so ids made by one process
 * sort in creation order), then 64 random bits: UUIDv7-like, in lowercase hex. The time never goes
 * back: when the clock steps back or a millisecond's counter is used up, ids borrow the next one.
 */
export function newId(prefix: IdPrefix): string {
  const now = Date.now();
  if (now > lastMs) {
    lastMs = now;
    counter = 0;
  } else if (counter < 0xffff) counter++;
  else {
    lastMs++;
    counter = 0;
  }
  const time = lastMs.toString(16).padStart(12, "0");
  const seq = counter.toString(16).padStart(4, "0");
  return `${prefix}_${time}${seq}${randomHex8()}`;
}

/**
 * The lowest id of this prefix made at `at` or later: every id made before `at` sorts below it, so
 * `{_id: {$lt: idFloorAt(prefix, at)}}` selects the older ones by `_id` alone (retention sweeps of
 * documents keyed by an id, without a date field or its index).
 */
export function idFloorAt(prefix: IdPrefix, at: Date): string {
  return `${prefix}_${Math.max(0, at.getTime()).toString(16).padStart(12, "0")}`;
}

const ID_PATTERN = /^([a-z]+)_([0-9a-f]{32})$/;

/** True when `value` is an id with this prefix (cheap check before a lookup). */
export function isId(value: string, prefix: IdPrefix): boolean {
  const m = ID_PATTERN.exec(value);
  return m !== null && m[1] === prefix;
}
