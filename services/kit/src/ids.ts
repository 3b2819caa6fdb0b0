import { randomBytes } from "node:crypto";

/** Type prefixes of api.md "Conventions"; an id is `<prefix>_<32 hex>`, sortable by creation time. */
export type IdPrefix =
  | "org"
  | "usr"
  | "key"
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
  | "evc"
  | "evr"
  | "lbm"
  | "whk"
  | "imp"
  | "dlv"
  | "req";

let lastMs = 0;
let counter = 0;

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
  return `${prefix}_${time}${seq}${randomBytes(8).toString("hex")}`;
}

const ID_PATTERN = /^([a-z]+)_([0-9a-f]{32})$/;

/** True when `value` is an id with this prefix (cheap check before a lookup). */
export function isId(value: string, prefix: IdPrefix): boolean {
  const m = ID_PATTERN.exec(value);
  return m !== null && m[1] === prefix;
}
