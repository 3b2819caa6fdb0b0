import type { ScimToken } from "@kiln/proto/scim";
import Type from "typebox";
import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { pageById } from "../http/list-page.js";
import { ACCESS_TOKEN_ONLY, answers, operations, pageByIdSchema } from "../http/operation.js";
import { rpcOptions } from "../http/request.js";
import { Body, errorResponses, IdParams, ListQuery, Nullable, ref, Timestamp } from "../schemas.js";
import { iso } from "./views.js";

export const ScimTokenView = Type.Object(
  {
    id: Type.String(),
    organizationId: Type.String(),
    name: Type.String(),
    createdByUserId: Type.String(),
    createdAt: Timestamp,
    revokedAt: Nullable(Timestamp),
  },
  { $id: "ScimToken", description: "a SCIM bearer token of an organization (docs/scim.md), never its secret" },
);

export const scimTokenView = (t: ScimToken | undefined) => ({
  id: t?.id ?? "",
  organizationId: t?.organizationId ?? "",
  name: t?.name ?? "",
  createdByUserId: t?.createdByUserId ?? "",
  createdAt: iso(t?.createdAt) ?? "",
  revokedAt: iso(t?.revokedAt),
});

const TokenParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 100 }),
  tokenId: Type.String({ minLength: 1, maxLength: 100 }),
});

const op = operations({ tags: ["organizations"], stability: "non-public", security: ACCESS_TOKEN_ONLY });

/** The SCIM tokens of an organization (api.md "SCIM tokens"): owners and admins, access tokens only. */
export function registerScimTokenRoutes(app: GatewayApp, deps: GatewayDeps): void {
  const { scim } = deps.clients;

  app.post(
    "/api/organizations/:id/scim-tokens",
    op("createScimToken", "Create a SCIM token for the organization's identity provider; the token is shown once", {
      params: IdParams,
      body: Body({ name: Type.String({ minLength: 1, maxLength: 200 }) }),
      response: {
        201: Type.Object({
          scimToken: ref(ScimTokenView),
          token: Type.String({ description: "scim_<id>_<secret>: the bearer token of /scim/v2, never shown again" }),
        }),
        ...errorResponses(400, 401, 403, 404),
      },
    }),
    async (request, reply) => {
      const r = await scim.createScimToken(
        { organizationId: request.params.id, name: request.body.name },
        rpcOptions(request),
      );
      return reply.code(201).send({ scimToken: scimTokenView(r.scimToken), token: r.token });
    },
  );

  app.get(
    "/api/organizations/:id/scim-tokens",
    op("listScimTokens", "The SCIM tokens of an organization, newest first (never their secrets)", {
      ...pageByIdSchema(ScimTokenView, Type.Object(ListQuery, { additionalProperties: false })),
    }),
    pageById(scim.listScimTokens, "organizationId", "scimTokens", scimTokenView),
  );

  app.delete(
    "/api/organizations/:id/scim-tokens/:tokenId",
    op("revokeScimToken", "Revoke a SCIM token at once", {
      params: TokenParams,
      response: answers(ScimTokenView, 401, 403, 404),
    }),
    async (request) => {
      const r = await scim.revokeScimToken(
        { organizationId: request.params.id, id: request.params.tokenId },
        rpcOptions(request),
      );
      return scimTokenView(r.scimToken);
    },
  );
}
