import type { ScimGroup, ScimUser } from "@kiln/proto/scim";
import type { FastifyRequest } from "fastify";
import { invalidValue } from "./scim-errors.js";
import { isObject, iso } from "./views.js";

/** SCIM resources (RFC 7643) ⇄ the ScimService's messages. */

export const USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User";
export const GROUP_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Group";
export const LIST_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:ListResponse";

type Json = Record<string, unknown>;

/** The base URL of the request's /scim/v2, for `meta.location` and the Location header. */
export const scimBase = (request: FastifyRequest) => `${request.protocol}://${request.host}/scim/v2`;

/** The value of `name` in `o`, matched case-insensitively (RFC 7643 §2.1). */
function field(o: Json, name: string): unknown {
  const key = Object.keys(o).find((k) => k.toLowerCase() === name.toLowerCase());
  return key === undefined ? undefined : o[key];
}

function text(o: Json, name: string, label = name): string {
  const v = field(o, name);
  if (v === undefined || v === null) return "";
  if (typeof v !== "string") throw invalidValue(`${label} must be a string`);
  return v;
}

/** A boolean as SCIM clients send it: true/false, or Entra's "True"/"False". */
function flag(o: Json, name: string, fallback: boolean): boolean {
  const v = field(o, name);
  if (v === undefined || v === null) return fallback;
  if (typeof v === "boolean") return v;
  if (typeof v === "string" && /^(true|false)$/i.test(v)) return v.toLowerCase() === "true";
  throw invalidValue(`${name} must be a boolean`);
}

/** The writable attributes of a User resource; `active` is true unless it says otherwise. */
export function userInputOf(body: unknown) {
  if (!isObject(body)) throw invalidValue("a User resource is a JSON object");
  const name = field(body, "name");
  const names = isObject(name) ? name : {};
  const emails = field(body, "emails") ?? [];
  if (!Array.isArray(emails)) throw invalidValue("emails must be an array");
  return {
    userName: text(body, "userName"),
    externalId: text(body, "externalId"),
    active: flag(body, "active", true),
    displayName: text(body, "displayName"),
    givenName: text(names, "givenName", "name.givenName"),
    familyName: text(names, "familyName", "name.familyName"),
    emails: emails.map((e, i) => {
      if (!isObject(e)) throw invalidValue(`emails[${i}] must be an object`);
      return {
        value: text(e, "value", `emails[${i}].value`),
        type: text(e, "type", `emails[${i}].type`),
        primary: flag(e, "primary", false),
      };
    }),
  };
}

export function userResource(u: ScimUser | undefined, base: string): Json {
  const id = u?.id ?? "";
  const formatted = [u?.givenName, u?.familyName].filter(Boolean).join(" ");
  return {
    schemas: [USER_SCHEMA],
    id,
    ...(u?.externalId && { externalId: u.externalId }),
    userName: u?.userName ?? "",
    name: { givenName: u?.givenName ?? "", familyName: u?.familyName ?? "", ...(formatted && { formatted }) },
    ...(u?.displayName && { displayName: u.displayName }),
    active: u?.active ?? false,
    emails: (u?.emails ?? []).map((e) => ({ value: e.value, ...(e.type && { type: e.type }), primary: e.primary })),
    groups: (u?.groups ?? []).map((g) => ({ value: g.id, display: g.displayName, $ref: `${base}/Groups/${g.id}` })),
    meta: {
      resourceType: "User",
      created: iso(u?.createdAt),
      lastModified: iso(u?.updatedAt),
      location: `${base}/Users/${id}`,
    },
  };
}

/** The writable attributes of a Group resource: its name, external id and members' user ids. */
export function groupInputOf(body: unknown) {
  if (!isObject(body)) throw invalidValue("a Group resource is a JSON object");
  const members = field(body, "members") ?? [];
  if (!Array.isArray(members)) throw invalidValue("members must be an array");
  return {
    displayName: text(body, "displayName"),
    externalId: text(body, "externalId"),
    memberIds: members.map((m, i) => {
      if (!isObject(m)) throw invalidValue(`members[${i}] must be an object`);
      return text(m, "value", `members[${i}].value`);
    }),
  };
}

export function groupResource(g: ScimGroup | undefined, base: string, withMembers = true): Json {
  const id = g?.id ?? "";
  return {
    schemas: [GROUP_SCHEMA],
    id,
    displayName: g?.displayName ?? "",
    ...(g?.externalId && { externalId: g.externalId }),
    ...(withMembers && {
      members: (g?.members ?? []).map((m) => ({
        value: m.id,
        display: m.displayName,
        $ref: `${base}/Users/${m.id}`,
      })),
    }),
    meta: {
      resourceType: "Group",
      created: iso(g?.createdAt),
      lastModified: iso(g?.updatedAt),
      location: `${base}/Groups/${id}`,
    },
  };
}

/** A ListResponse (RFC 7644 §3.4.2) of a page that starts at `startIndex`. */
export const listResponse = (resources: Json[], totalResults: number, startIndex: number) => ({
  schemas: [LIST_SCHEMA],
  totalResults,
  startIndex,
  itemsPerPage: resources.length,
  Resources: resources,
});
