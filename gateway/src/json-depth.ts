import { LIMITS } from "@kiln/kit/limits";

/**
 * The nesting limit of request bodies, checked on the raw text before JSON.parse: a body nested
 * deeper than any real request is refused before anything (the parser, schema validation,
 * serialization for the services, the services' own walkers) can recurse on it. The same limit as
 * the catalog's for stored JSON (MAX_JSON_DEPTH there).
 */
export const MAX_BODY_DEPTH = LIMITS.bodyDepth;

const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Whether JSON `text` nests objects and arrays deeper than `limit`; linear, no recursion. */
export function jsonDepthExceeds(text: string, limit = MAX_BODY_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (++depth > limit) return true;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      depth--;
    }
  }
  return false;
}
