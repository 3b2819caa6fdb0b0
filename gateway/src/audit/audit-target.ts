import type { FastifyRequest } from "fastify";

/** What one answered request is, for its audit entry: read from the request and its answer. */

type Json = Record<string, unknown>;

const asObject = (v: unknown): Json | undefined =>
  v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Json) : undefined;

function at(source: unknown, path: string[]): string {
  let v: unknown = source;
  for (const k of path) v = asObject(v)?.[k];
  return typeof v === "string" ? v : "";
}

/** The target's id by its spec in AUDIT_ACTIONS (`p.id`, `r.user.id`, `p.id+p.label`, `actor`). */
export function targetIdOf(spec: string, request: FastifyRequest, answer: unknown): string {
  return spec
    .split("+")
    .map((part) => {
      if (part === "actor") return request.principal?.id ?? "";
      const [where, ...path] = part.split(".");
      const source =
        where === "p" ? request.params : where === "b" ? request.body : where === "q" ? request.query : answer;
      const value = at(source, path);
      return where === "b" && path[0] === "email" ? value.toLowerCase() : value;
    })
    .join(":");
}

/** The first `organizationId` in a JSON answer, at most three levels down (a view, or a view in a page). */
export function organizationIn(value: unknown, depth = 0): string {
  if (depth > 3 || value === null || typeof value !== "object") return "";
  if (Array.isArray(value)) return value.length > 0 ? organizationIn(value[0], depth + 1) : "";
  const o = value as Json;
  if (typeof o.organizationId === "string" && o.organizationId) return o.organizationId;
  for (const v of Object.values(o)) {
    const found = organizationIn(v, depth + 1);
    if (found) return found;
  }
  return "";
}

/**
 * The organization a request acted in, from what it says: the answer, then the body or query's
 * `organizationId`, then an /api/organizations/:id path, then the credential's own organization.
 */
export function organizationOf(request: FastifyRequest, answer: unknown): string {
  const url = request.routeOptions.url ?? "";
  return (
    organizationIn(answer) ||
    at(request.body, ["organizationId"]) ||
    at(request.query, ["organizationId"]) ||
    (url.startsWith("/api/organizations/:id") ? at(request.params, ["id"]) : "") ||
    (request.principal && request.principal.type !== "user" ? (request.principal.organizationId ?? "") : "")
  );
}

/** The names of the fields a write sent, nested ones dotted (`settings.protectedLabels`); never their values. */
export function changedFieldsOf(body: unknown): string[] {
  const o = asObject(body);
  if (!o) return [];
  const names: string[] = [];
  for (const [k, v] of Object.entries(o)) {
    const inner = asObject(v);
    // One level down for settings-like objects; deeper structure (a workflow, variables) is one field.
    if (inner && k === "settings") for (const ik of Object.keys(inner)) names.push(`${k}.${ik}`);
    else names.push(k);
  }
  return names.sort().slice(0, 100);
}
