import type { FastifyRequest } from "fastify";
import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { equalitiesOf, type FilterAttributes } from "./scim-filter.js";
import { pageQueryOf, SCIM_ROUTE, scimCall, sendScim } from "./scim-http.js";
import { patched } from "./scim-patch.js";
import { groupInputOf, groupResource, listResponse, scimBase } from "./scim-views.js";

const GROUP_FILTERS: FilterAttributes = {
  displayname: { name: "displayName", type: "string" },
  externalid: { name: "externalId", type: "string" },
};

type WithId = FastifyRequest<{ Params: { id: string } }>;

/** `excludedAttributes=members` (Okta's group lists): the members are left out. */
const withMembers = (request: FastifyRequest) => {
  const excluded = (request.query as { excludedAttributes?: string }).excludedAttributes ?? "";
  return !excluded.split(",").some((a) => a.trim().toLowerCase() === "members");
};

/** /scim/v2/Groups (docs/scim.md "Groups and roles"). */
export function registerScimGroupRoutes(app: GatewayApp, deps: GatewayDeps): void {
  const { scim } = deps.clients;
  const replace = async (request: WithId, body: unknown) => {
    const r = await scim.replaceScimGroup(
      { token: request.scimToken, id: request.params.id, group: groupInputOf(body) },
      scimCall(request),
    );
    return groupResource(r.group, scimBase(request), withMembers(request));
  };

  app.post("/Groups", SCIM_ROUTE, async (request, reply) => {
    const r = await scim.createScimGroup(
      { token: request.scimToken, group: groupInputOf(request.body) },
      scimCall(request),
    );
    const resource = groupResource(r.group, scimBase(request));
    reply.header("location", (resource.meta as { location: string }).location);
    return sendScim(reply, 201, resource);
  });

  app.get("/Groups", SCIM_ROUTE, async (request, reply) => {
    const query = request.query as Record<string, string | undefined>;
    const where = equalitiesOf(query.filter, GROUP_FILTERS);
    const page = pageQueryOf(query);
    const r = await scim.listScimGroups(
      {
        token: request.scimToken,
        displayName: (where.displayName as string | undefined) ?? "",
        externalId: (where.externalId as string | undefined) ?? "",
        ...page,
      },
      scimCall(request),
    );
    const base = scimBase(request);
    const resources = r.groups.map((g) => groupResource(g, base, withMembers(request)));
    return sendScim(reply, 200, listResponse(resources, r.totalResults, page.startIndex));
  });

  app.get<{ Params: { id: string } }>("/Groups/:id", SCIM_ROUTE, async (request, reply) => {
    const r = await scim.getScimGroup({ token: request.scimToken, id: request.params.id }, scimCall(request));
    return sendScim(reply, 200, groupResource(r.group, scimBase(request), withMembers(request)));
  });

  app.put<{ Params: { id: string } }>("/Groups/:id", SCIM_ROUTE, async (request, reply) =>
    sendScim(reply, 200, await replace(request, request.body)),
  );

  // PATCH (members added or removed, a new name): applied to the group as stored, stored as a replacement.
  app.patch<{ Params: { id: string } }>("/Groups/:id", SCIM_ROUTE, async (request, reply) => {
    const r = await scim.getScimGroup({ token: request.scimToken, id: request.params.id }, scimCall(request));
    const current = groupResource(r.group, scimBase(request));
    return sendScim(reply, 200, await replace(request, patched(current, request.body)));
  });

  app.delete<{ Params: { id: string } }>("/Groups/:id", SCIM_ROUTE, async (request, reply) => {
    await scim.deleteScimGroup({ token: request.scimToken, id: request.params.id }, scimCall(request));
    return reply.code(204).send();
  });
}
