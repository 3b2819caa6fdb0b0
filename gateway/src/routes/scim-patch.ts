import { type Filter, filter as matcher, parse } from "scim2-parse-filter";
import { ScimError } from "./scim-errors.js";
import { isObject } from "./views.js";

export const PATCH_OP_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:PatchOp";

type Json = Record<string, unknown>;

const CORE_PREFIX = /^urn:ietf:params:scim:schemas:core:2\.0:(User|Group):/i;
// attr, an optional [filter], an optional .sub-attribute (RFC 7644 §3.5.2 "PATH").
const PATH = /^([A-Za-z][\w$-]*)(?:\[(.+)\])?(?:\.([A-Za-z][\w$-]*))?$/;

const invalidPath = (path: string) => new ScimError(400, `the path "${path}" is not a supported path`, "invalidPath");
const invalidSyntax = (detail: string) => new ScimError(400, detail, "invalidSyntax");

/** The resource's own key for `name` (attribute names are case-insensitive, RFC 7643 §2.1). */
function keyOf(resource: Json, name: string): string {
  return Object.keys(resource).find((k) => k.toLowerCase() === name.toLowerCase()) ?? name;
}

function parsePath(path: string) {
  const m = PATH.exec(path.replace(CORE_PREFIX, "").trim());
  if (!m?.[1]) throw invalidPath(path);
  let where: ((item: unknown) => boolean) | undefined;
  if (m[2]) {
    let ast: Filter;
    try {
      ast = parse(m[2]);
    } catch {
      throw invalidPath(path);
    }
    const test = matcher(ast);
    where = (item) => isObject(item) && test(item);
  }
  return { attr: m[1], where, sub: m[3] };
}

/** `value` merged into `resource`: complex values merge, multi-valued ones are appended (add). */
function merge(resource: Json, value: Json, append: boolean): void {
  for (const [name, v] of Object.entries(value)) {
    const path = name.replace(CORE_PREFIX, "");
    // "name.givenName" as a key of a path-less value, as Entra sends it.
    if (path.includes(".") && !path.startsWith("urn:")) {
      apply(resource, { op: "replace", path, value: v });
      continue;
    }
    const key = keyOf(resource, path);
    const current = resource[key];
    if (append && Array.isArray(current) && Array.isArray(v)) resource[key] = [...current, ...v];
    else if (isObject(current) && isObject(v)) merge(current, v, append);
    else resource[key] = v;
  }
}

interface Op {
  op: string;
  path?: string;
  value?: unknown;
}

/** One operation of a PATCH applied to the resource's JSON (RFC 7644 §3.5.2). */
function apply(resource: Json, op: Op): void {
  const kind = op.op.toLowerCase();
  if (!op.path) {
    if (kind === "remove") throw new ScimError(400, "a remove operation needs a path", "noTarget");
    if (!isObject(op.value)) throw invalidSyntax(`an ${kind} operation without a path needs an object value`);
    merge(resource, op.value, kind === "add");
    return;
  }
  const path = op.path.replace(CORE_PREFIX, "");
  if (path.toLowerCase().startsWith("urn:")) {
    // An extension's attribute (Entra's enterprise User): kept beside the core ones, stored by none.
    if (op.op.toLowerCase() === "remove") return;
    const at = path.lastIndexOf(":");
    apply(resource, { ...op, path: undefined, value: { [path.slice(0, at)]: { [path.slice(at + 1)]: op.value } } });
    return;
  }
  const { attr, where, sub } = parsePath(path);
  const key = keyOf(resource, attr);
  if (where) {
    applyFiltered(resource, key, where, sub, kind, op.value);
    return;
  }
  if (sub) {
    const parent = isObject(resource[key]) ? (resource[key] as Json) : {};
    resource[key] = parent;
    if (kind === "remove") delete parent[keyOf(parent, sub)];
    else parent[keyOf(parent, sub)] = op.value;
    return;
  }
  const current = resource[key];
  if (kind === "remove") {
    if (Array.isArray(current) && Array.isArray(op.value)) {
      // Okta and Entra remove group members by value: [{value: id}].
      const gone = new Set(op.value.map((v) => (isObject(v) ? v.value : v)));
      resource[key] = current.filter((item) => !(isObject(item) && gone.has(item.value)));
    } else delete resource[key];
  } else if (kind === "add" && Array.isArray(current)) {
    const added = Array.isArray(op.value) ? op.value : [op.value];
    const seen = new Set(current.map((item) => (isObject(item) ? item.value : item)));
    resource[key] = [...current, ...added.filter((v) => !(isObject(v) && seen.has(v.value)))];
  } else if (kind === "add" && isObject(current) && isObject(op.value)) merge(current, op.value, true);
  else resource[key] = op.value;
}

/** `attr[filter]` or `attr[filter].sub`: the matching items of a multi-valued attribute. */
function applyFiltered(
  resource: Json,
  key: string,
  where: (item: unknown) => boolean,
  sub: string | undefined,
  kind: string,
  value: unknown,
): void {
  const items = Array.isArray(resource[key]) ? (resource[key] as unknown[]) : [];
  if (kind === "remove" && !sub) {
    resource[key] = items.filter((item) => !where(item));
    return;
  }
  const matching = items.filter(where).filter(isObject);
  if (matching.length === 0 && kind !== "remove") {
    // Entra's `emails[type eq "work"].value` on a user without one: the item is made.
    if (!sub) throw new ScimError(400, `no ${key} item matches the path's filter`, "noTarget");
    resource[key] = [...items, { type: "work", [sub]: value }];
    return;
  }
  for (const item of matching) {
    if (!sub) Object.assign(item, isObject(value) ? value : {});
    else if (kind === "remove") delete item[keyOf(item, sub)];
    else item[keyOf(item, sub)] = value;
  }
}

/**
 * The resource's JSON after a PATCH body's operations, in order (Okta's path-less
 * `{"op":"replace","value":{"active":false}}` and Entra's `{"op":"Replace","path":"active",
 * "value":"False"}` alike: op names are case-insensitive). The body's shape is checked first.
 */
export function patched(resource: Json, body: unknown): Json {
  if (!isObject(body) || !Array.isArray(body.Operations) || body.Operations.length === 0) {
    throw invalidSyntax('a PATCH body is {"schemas": ["...:PatchOp"], "Operations": [{op, path?, value?}, ...]}');
  }
  if (body.Operations.length > 1_000) throw new ScimError(400, "a PATCH holds at most 1000 operations", "tooMany");
  const out = structuredClone(resource);
  for (const [i, op] of body.Operations.entries()) {
    if (!isObject(op) || typeof op.op !== "string" || !["add", "replace", "remove"].includes(op.op.toLowerCase())) {
      throw invalidSyntax(`Operations[${i}].op must be "add", "replace" or "remove"`);
    }
    if (op.path !== undefined && typeof op.path !== "string")
      throw invalidSyntax(`Operations[${i}].path must be a string`);
    apply(out, { op: op.op, path: op.path as string | undefined, value: op.value });
  }
  return out;
}
