import type { FastifyRequest } from "fastify";
import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { equalitiesOf, type FilterAttributes } from "./scim-filter.js";
import { pageQueryOf, SCIM_ROUTE, scimCall, sendScim } from "./scim-http.js";
import { patched } from "./scim-patch.js";
import { listResponse, scimBase, userInputOf, userResource } from "./scim-views.js";

const USER_FILTERS: FilterAttributes = {
  username: { name: "userName", type: "string" },
  "emails.value": { name: "emails.value", type: "string" },
  externalid: { name: "externalId", type: "string" },
  active: { name: "active", type: "boolean" },
};

type WithId = FastifyRequest<{ Params: { id: string } }>;

/** /scim/v2/Users (docs/scim.md "Users"). */
export function registerScimUserRoutes(app: GatewayApp, deps: GatewayDeps): void {
  const { scim } = deps.clients;
  /** Keys a deactivation revoked are refused by this gateway at once (docs/security.md "SCIM"). */
  const forget = (keyIds: string[]) => {
    for (const id of keyIds) deps.authenticator.forgetApiKey(id);
  };
  const replace = async (request: WithId, body: unknown) => {
    const r = await scim.replaceScimUser(
      { token: request.scimToken, id: request.params.id, user: userInputOf(body) },
      scimCall(request),
    );
    forget(r.revokedApiKeyIds);
    return userResource(r.user, scimBase(request));
  };

  app.post("/Users", SCIM_ROUTE, async (request, reply) => {
    const r = await scim.createScimUser(
      { token: request.scimToken, user: userInputOf(request.body) },
      scimCall(request),
    );
    const resource = userResource(r.user, scimBase(request));
    reply.header("location", (resource.meta as { location: string }).location);
    return sendScim(reply, 201, resource);
  });

  app.get("/Users", SCIM_ROUTE, async (request, reply) => {
    const query = request.query as Record<string, string | undefined>;
    const where = equalitiesOf(query.filter, USER_FILTERS);
    const page = pageQueryOf(query);
    const r = await scim.listScimUsers(
      {
        token: request.scimToken,
        userName: (where.userName as string | undefined) ?? "",
        email: (where["emails.value"] as string | undefined) ?? "",
        externalId: (where.externalId as string | undefined) ?? "",
        active: where.active as boolean | undefined,
        ...page,
      },
      scimCall(request),
    );
    const base = scimBase(request);
    return sendScim(
      reply,
      200,
      listResponse(
        r.users.map((u) => userResource(u, base)),
        r.totalResults,
        page.startIndex,
      ),
    );
  });

  app.get<{ Params: { id: string } }>("/Users/:id", SCIM_ROUTE, async (request, reply) => {
    const r = await scim.getScimUser({ token: request.scimToken, id: request.params.id }, scimCall(request));
    return sendScim(reply, 200, userResource(r.user, scimBase(request)));
  });

  app.put<{ Params: { id: string } }>("/Users/:id", SCIM_ROUTE, async (request, reply) =>
    sendScim(reply, 200, await replace(request, request.body)),
  );

  // PATCH: the operations applied to the user as stored, then stored as a replacement.
  app.patch<{ Params: { id: string } }>("/Users/:id", SCIM_ROUTE, async (request, reply) => {
    const r = await scim.getScimUser({ token: request.scimToken, id: request.params.id }, scimCall(request));
    const current = userResource(r.user, scimBase(request));
    return sendScim(reply, 200, await replace(request, patched(current, request.body)));
  });

  app.delete<{ Params: { id: string } }>("/Users/:id", SCIM_ROUTE, async (request, reply) => {
    const r = await scim.deleteScimUser({ token: request.scimToken, id: request.params.id }, scimCall(request));
    forget(r.revokedApiKeyIds);
    return reply.code(204).send();
  });
}
