import type { FastifyRequest } from "fastify";
import { changedFieldsOf } from "./audit-target.js";

/**
 * The audit action of a /scim/v2 write (those routes are out of the OpenAPI document, so out of
 * AUDIT_ACTIONS): `scim.user.created`, `scim.group.updated`, … The actor is the SCIM token (its id,
 * `sct_…`); identity records the entry in the token's organization.
 */
const VERBS: Record<string, string> = { POST: "created", PUT: "replaced", PATCH: "updated", DELETE: "deleted" };

export function scimAuditOf(request: FastifyRequest, answer: unknown) {
  const url = request.routeOptions.url ?? "";
  const m = /^\/scim\/v2\/(Users|Groups)(\/:id)?$/.exec(url);
  const verb = VERBS[request.method];
  if (!m || !verb) return undefined;
  const noun = m[1] === "Users" ? "user" : "group";
  const id =
    (request.params as { id?: string } | undefined)?.id ??
    ((answer as { id?: unknown } | undefined)?.id as string | undefined) ??
    "";
  const hex = /^scim_([0-9a-f]{32})_/.exec(request.scimToken ?? "")?.[1];
  return {
    action: `scim.${noun}.${verb}`,
    targetType: noun,
    targetId: id,
    actorType: "scim",
    actorId: hex ? `sct_${hex}` : "",
    changedFields: scimFieldsOf(request.body),
  };
}

/** A PATCH names its operations' paths (`active`, `members`); a POST or PUT its attributes. Never values. */
function scimFieldsOf(body: unknown): string[] {
  const ops = (body as { Operations?: unknown } | undefined)?.Operations;
  if (!Array.isArray(ops)) return changedFieldsOf(body).filter((f) => f !== "schemas");
  const names = ops.flatMap((op: { path?: unknown; value?: unknown }) => {
    if (typeof op?.path === "string") return [op.path];
    return op?.value && typeof op.value === "object" ? Object.keys(op.value) : [];
  });
  return [...new Set(names)].sort().slice(0, 100);
}
