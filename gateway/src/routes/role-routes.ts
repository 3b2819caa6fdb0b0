/**
 * Roles of an organization (docs/security.md "Roles"; beyond the contract, issue #51): the built-in
 * ones and custom roles made of API-key scopes, read by every member, made, changed and deleted by
 * owners and admins. Identity owns the rules; the gateway checks shapes.
 */
import { API_KEY_SCOPES } from "@kiln/contracts/api-key-scopes";
import type { Role } from "@kiln/proto/identity";
import Type from "typebox";
import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { ACCESS_TOKEN_ONLY, answers, operations } from "../http/operation.js";
import { rpcOptions } from "../http/request.js";
import { Body, errorResponses, IdParams, Nullable, OneOf, ref, Timestamp } from "../schemas.js";
import { answersOf, iso, RoleName } from "./views.js";

const op = operations({ tags: ["organizations"], stability: "beta", security: ACCESS_TOKEN_ONLY });
const RoleParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }), name: RoleName });
const Scopes = Type.Array(OneOf([...API_KEY_SCOPES]), {
  minItems: 1,
  maxItems: API_KEY_SCOPES.length,
  uniqueItems: true,
});
const Description = Type.String({ maxLength: 500 });

export const RoleView = Type.Object(
  {
    name: RoleName,
    description: Type.String(),
    scopes: Nullable(Type.Array(Type.String()), {
      description: "the API-key scopes the role grants its members; null: every scope (owner, admin, member)",
    }),
    builtIn: Type.Boolean(),
    createdAt: Nullable(Timestamp, { description: "null for a built-in role" }),
    updatedAt: Nullable(Timestamp, { description: "null for a built-in role" }),
  },
  { $id: "Role" },
);

export const RoleListView = Type.Object(
  { data: Type.Array(ref(RoleView), { description: "the built-in roles, then the custom ones by name" }) },
  { $id: "RoleList" },
);

const { view } = answersOf("identity");
const roleView = view("role", (r: Role) => ({
  name: r.name,
  description: r.description,
  scopes: r.allScopes ? null : [...r.scopes],
  builtIn: r.builtIn,
  createdAt: iso(r.createdAt),
  updatedAt: iso(r.updatedAt),
}));

export function registerRoleRoutes(app: GatewayApp, deps: GatewayDeps): void {
  const { identity } = deps.clients;

  app.get(
    "/api/organizations/:id/roles",
    op(
      "listRoles",
      "The organization's roles: the built-in ones, then its custom roles by name, each with its scopes",
      {
        params: IdParams,
        response: answers(RoleListView, 401, 403, 404),
      },
    ),
    async (request) => {
      const r = await identity.listRoles({ organizationId: request.params.id }, rpcOptions(request));
      return { data: r.roles.map((role) => roleView(role)) };
    },
  );

  app.post(
    "/api/organizations/:id/roles",
    op("createRole", "Create a custom role made of API-key scopes (owners and admins); give it to members by name", {
      params: IdParams,
      body: Body({ name: RoleName, description: Type.Optional(Description), scopes: Scopes }),
      response: { 201: ref(RoleView), ...errorResponses(400, 401, 403, 404, 409) },
    }),
    async (request, reply) => {
      const b = request.body;
      const r = await identity.createRole(
        { organizationId: request.params.id, name: b.name, description: b.description ?? "", scopes: b.scopes },
        rpcOptions(request),
      );
      return reply.code(201).send(roleView(r.role));
    },
  );

  app.patch(
    "/api/organizations/:id/roles/:name",
    op("updateRole", "Change a custom role's description or scopes; its members' next requests use them", {
      params: RoleParams,
      body: Body({ description: Type.Optional(Description), scopes: Type.Optional(Scopes) }),
      response: answers(RoleView, 400, 401, 403, 404),
    }),
    async (request) => {
      const b = request.body;
      const r = await identity.updateRole(
        {
          organizationId: request.params.id,
          name: request.params.name,
          description: b.description,
          scopes: b.scopes ?? [],
          setScopes: b.scopes !== undefined,
        },
        rpcOptions(request),
      );
      return roleView(r.role);
    },
  );

  app.delete(
    "/api/organizations/:id/roles/:name",
    op("deleteRole", "Delete a custom role no member holds and no pending invitation names", {
      params: RoleParams,
      response: answers(RoleView, 401, 403, 404, 409),
    }),
    async (request) => {
      const r = await identity.deleteRole(
        { organizationId: request.params.id, name: request.params.name },
        rpcOptions(request),
      );
      return roleView(r.role);
    },
  );
}
