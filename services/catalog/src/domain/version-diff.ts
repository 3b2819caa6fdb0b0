/**
 * The one version diff of the catalog (api.md "Version diffs"), for tools and skills today and
 * agents later: the changes that turn the `from` document into the `to` document, as JSON Pointer
 * paths with the values before and after.
 *
 * Built on fast-json-patch's `compare` rather than jsondiffpatch: it emits RFC 6902 operations
 * directly, only `add`/`remove`/`replace` (jsondiffpatch's JSON-Patch formatter also emits `move`,
 * which the contract has no word for), with RFC 6901 escaping done, and its "invertible" mode puts
 * the old value in a `test` operation before every `replace`/`remove`, which gives `before` without
 * a second walk. It only reads own keys and copies values through JSON, so keys such as
 * `__proto__` or `a.b` diff like any other. Arrays are compared index by index (no LCS): inserting at
 * the front of an array reads as replacements plus an add at the end, which is still exact. The
 * changes, in the order given, are a valid JSON Patch from `from` to `to`.
 */
import jsonPatch from "fast-json-patch";
import type { JsonObject, JsonValue } from "./json-schema.js";

export type ChangeOp = "add" | "remove" | "replace";

export interface Change {
  op: ChangeOp;
  /** RFC 6901 JSON Pointer into the diffed document. */
  path: string;
  before?: JsonValue;
  after?: JsonValue;
}

export interface DocumentDiff {
  changes: Change[];
  /** One line for people, e.g. "2 changes: replaced /config/result/city, added /inputSchema/required/1". */
  summary: string;
}

const PAST_TENSE: Record<ChangeOp, string> = { add: "added", remove: "removed", replace: "replaced" };
const LISTED_IN_SUMMARY = 5;

/** Diffs two versions' documents; `from` null means "against nothing" (version 1: every field is added). */
export function diffDocuments(from: JsonObject | null, to: JsonObject): DocumentDiff {
  const operations = jsonPatch.compare(from ?? {}, to, true);
  const changes: Change[] = [];
  let previous: { path: string; value: JsonValue } | undefined;
  for (const operation of operations) {
    const before = previous?.path === operation.path ? previous.value : undefined;
    previous = undefined;
    switch (operation.op) {
      case "test":
        previous = { path: operation.path, value: operation.value as JsonValue };
        break;
      case "add":
        changes.push({ op: "add", path: operation.path, after: operation.value as JsonValue });
        break;
      case "remove":
        changes.push({ op: "remove", path: operation.path, ...(before !== undefined && { before }) });
        break;
      case "replace":
        changes.push({
          op: "replace",
          path: operation.path,
          ...(before !== undefined && { before }),
          after: operation.value as JsonValue,
        });
        break;
      default:
        throw new Error(`unexpected diff operation ${operation.op}`);
    }
  }
  return { changes, summary: summarize(changes) };
}

export function summarize(changes: Change[]): string {
  if (changes.length === 0) return "no changes";
  const listed = changes
    .slice(0, LISTED_IN_SUMMARY)
    .map((c) => `${PAST_TENSE[c.op]} ${c.path || "the whole document"}`);
  const more = changes.length - listed.length;
  const head = changes.length === 1 ? "1 change" : `${changes.length} changes`;
  return `${head}: ${listed.join(", ")}${more > 0 ? `, and ${more} more` : ""}`;
}
