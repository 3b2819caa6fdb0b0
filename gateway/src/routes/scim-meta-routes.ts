import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { ScimError } from "./scim-errors.js";
import { SCIM_ROUTE, scimCall, sendScim } from "./scim-http.js";
import { GROUP_SCHEMA, listResponse, scimBase, USER_SCHEMA } from "./scim-views.js";

/** The discovery endpoints (RFC 7644 §4): what this service provider supports, and its schemas. */

const SPC_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig";
const RESOURCE_TYPE_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:ResourceType";
const SCHEMA_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Schema";

interface Attribute {
  name: string;
  type: "string" | "boolean" | "complex" | "dateTime" | "reference";
  multiValued?: boolean;
  required?: boolean;
  mutability?: "readOnly" | "readWrite" | "immutable";
  uniqueness?: "none" | "server";
  subAttributes?: Attribute[];
}

/** An attribute definition with RFC 7643 §7's defaults spelled out. */
const attr = (a: Attribute): Record<string, unknown> => ({
  name: a.name,
  type: a.type,
  multiValued: a.multiValued ?? false,
  required: a.required ?? false,
  caseExact: false,
  mutability: a.mutability ?? "readWrite",
  returned: "default",
  uniqueness: a.uniqueness ?? "none",
  ...(a.subAttributes && { subAttributes: a.subAttributes.map(attr) }),
});

const ref = (name: string): Attribute => ({
  name,
  type: "complex",
  multiValued: true,
  subAttributes: [
    { name: "value", type: "string" },
    { name: "display", type: "string", mutability: "readOnly" },
  ],
});

const SCHEMAS = [
  {
    id: USER_SCHEMA,
    name: "User",
    description: "A member of the organization",
    attributes: [
      { name: "userName", type: "string", required: true, uniqueness: "server" },
      { name: "externalId", type: "string" },
      {
        name: "name",
        type: "complex",
        subAttributes: [
          { name: "givenName", type: "string" },
          { name: "familyName", type: "string" },
        ],
      },
      { name: "displayName", type: "string" },
      { name: "active", type: "boolean" },
      {
        name: "emails",
        type: "complex",
        multiValued: true,
        subAttributes: [
          { name: "value", type: "string" },
          { name: "type", type: "string" },
          { name: "primary", type: "boolean" },
        ],
      },
      { ...ref("groups"), mutability: "readOnly" },
    ] satisfies Attribute[],
  },
  {
    id: GROUP_SCHEMA,
    name: "Group",
    description: "A group of members; kiln-admins and kiln-members give roles (docs/scim.md)",
    attributes: [
      { name: "displayName", type: "string", required: true, uniqueness: "server" },
      { name: "externalId", type: "string" },
      ref("members"),
    ] satisfies Attribute[],
  },
];

const RESOURCE_TYPES = [
  { id: "User", name: "User", endpoint: "/Users", schema: USER_SCHEMA },
  { id: "Group", name: "Group", endpoint: "/Groups", schema: GROUP_SCHEMA },
];

const SERVICE_PROVIDER_CONFIG = {
  schemas: [SPC_SCHEMA],
  patch: { supported: true },
  bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
  filter: { supported: true, maxResults: 200 },
  changePassword: { supported: false },
  sort: { supported: false },
  etag: { supported: false },
  authenticationSchemes: [
    {
      type: "oauthbearertoken",
      name: "SCIM token",
      description: "Authorization: Bearer scim_... (POST /api/organizations/:id/scim-tokens)",
      primary: true,
    },
  ],
};

export function registerScimMetaRoutes(app: GatewayApp, deps: GatewayDeps): void {
  // The token is checked here too (a count of nothing): only a working token reads the service.
  app.addHook("preHandler", async (request) => {
    if (!/\/(ServiceProviderConfig|ResourceTypes|Schemas)(\/|\?|$)/.test(request.url)) return;
    await deps.clients.scim.listScimUsers({ token: request.scimToken, count: 0 }, scimCall(request));
  });

  const schemaResource = (s: (typeof SCHEMAS)[number], base: string) => ({
    schemas: [SCHEMA_SCHEMA],
    ...s,
    attributes: s.attributes.map(attr),
    meta: { resourceType: "Schema", location: `${base}/Schemas/${s.id}` },
  });
  const typeResource = (t: (typeof RESOURCE_TYPES)[number], base: string) => ({
    schemas: [RESOURCE_TYPE_SCHEMA],
    ...t,
    meta: { resourceType: "ResourceType", location: `${base}/ResourceTypes/${t.id}` },
  });

  app.get("/ServiceProviderConfig", SCIM_ROUTE, async (request, reply) =>
    sendScim(reply, 200, {
      ...SERVICE_PROVIDER_CONFIG,
      meta: { resourceType: "ServiceProviderConfig", location: `${scimBase(request)}/ServiceProviderConfig` },
    }),
  );
  app.get("/ResourceTypes", SCIM_ROUTE, async (request, reply) => {
    const all = RESOURCE_TYPES.map((t) => typeResource(t, scimBase(request)));
    return sendScim(reply, 200, listResponse(all, all.length, 1));
  });
  app.get<{ Params: { id: string } }>("/ResourceTypes/:id", SCIM_ROUTE, async (request, reply) => {
    const found = RESOURCE_TYPES.find((t) => t.id === request.params.id);
    if (!found) throw new ScimError(404, `no resource type ${request.params.id}`);
    return sendScim(reply, 200, typeResource(found, scimBase(request)));
  });
  app.get("/Schemas", SCIM_ROUTE, async (request, reply) => {
    const all = SCHEMAS.map((s) => schemaResource(s, scimBase(request)));
    return sendScim(reply, 200, listResponse(all, all.length, 1));
  });
  app.get<{ Params: { id: string } }>("/Schemas/:id", SCIM_ROUTE, async (request, reply) => {
    const found = SCHEMAS.find((s) => s.id === request.params.id);
    if (!found) throw new ScimError(404, `no schema ${request.params.id}`);
    return sendScim(reply, 200, schemaResource(found, scimBase(request)));
  });
}
