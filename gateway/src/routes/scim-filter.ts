import { type Filter, parse } from "scim2-parse-filter";
import { invalidFilter } from "./scim-errors.js";

/** The attributes a resource's list filters on, by lower-cased name: their canonical name and type. */
export type FilterAttributes = Record<string, { name: string; type: "string" | "boolean" }>;

const MAX_FILTER_LENGTH = 1_000;
const CORE_PREFIX = /^urn:ietf:params:scim:schemas:core:2\.0:(User|Group):/i;

const unsupported = (attributes: FilterAttributes) =>
  invalidFilter(
    `only "eq" comparisons joined by "and" are supported, on ${Object.values(attributes)
      .map((a) => a.name)
      .join(", ")}`,
  );

/**
 * The equality comparisons of a list's `filter` (docs/scim.md "Filters"): `attr eq value`, joined
 * by `and`, on the resource's filter attributes; `emails[type eq "work"].value eq x` (as Okta sends)
 * is `emails.value eq x`, the type naming no more than the address does. Anything else is a SCIM
 * 400 `invalidFilter`.
 */
export function equalitiesOf(filter: string | undefined, attributes: FilterAttributes) {
  const out: Record<string, string | boolean> = {};
  if (filter === undefined || filter.trim() === "") return out;
  if (filter.length > MAX_FILTER_LENGTH) throw invalidFilter(`the filter exceeds ${MAX_FILTER_LENGTH} characters`);
  let ast: Filter;
  try {
    ast = parse(filter);
  } catch {
    throw invalidFilter(`the filter is not a SCIM filter: ${filter}`);
  }
  const visit = (f: Filter, within?: string): void => {
    if (f.op === "and") {
      for (const g of f.filters) visit(g, within);
      return;
    }
    if (f.op === "[]" && within === undefined && f.attrPath.toLowerCase() === "emails") {
      visit(f.valFilter, "emails");
      return;
    }
    if (f.op !== "eq") throw unsupported(attributes);
    const path = f.attrPath.replace(CORE_PREFIX, "").toLowerCase();
    // Inside emails[...]: the type narrows which address, the value is the address.
    if (within === "emails" && path === "type") return;
    const attribute = attributes[within ? `${within}.${path}` : path];
    if (!attribute) throw unsupported(attributes);
    const value = f.compValue;
    if (attribute.type === "boolean" ? typeof value !== "boolean" : typeof value !== "string") {
      throw invalidFilter(`${attribute.name} compares with a ${attribute.type}`);
    }
    if (attribute.name in out && out[attribute.name] !== value) throw unsupported(attributes);
    out[attribute.name] = value as string | boolean;
  };
  visit(ast);
  return out;
}
