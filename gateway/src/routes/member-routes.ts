import type { FastifyRequest } from "fastify";
import Type from "typebox";
import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { pageById } from "../http/list-page.js";
import { ACCESS_TOKEN_ONLY, answers, operations, pageByIdSchema } from "../http/operation.js";
import { rpcOptions } from "../http/request.js";
import { Body, errorResponses, IdParams, ListQuery, ref } from "../schemas.js";
import { registerRoleRoutes } from "./role-routes.js";
import {
  AcceptedInvitationView,
  InvitationView,
  invitationView,
  MemberView,
  membershipView,
  memberView,
  organizationView,
  RoleName,
} from "./views.js";

const Role = RoleName;
const Email = Type.String({ minLength: 1, maxLength: 254 });
const Id = Type.String({ minLength: 1, maxLength: 100 });
const MemberParams = Type.Object({ id: Id, userId: Id });
const InvitationParams = Type.Object({ id: Id, invitationId: Id });

const op = operations({ tags: ["organizations"], stability: "non-public", security: ACCESS_TOKEN_ONLY });

/**
 * Where the console accepts an invitation: the console's origin when the request comes from one
 * the gateway allows (CORS_ORIGINS), else the gateway's own, which serves the console at /. The
 * token is the URL's fragment: browsers never send it, so no server or proxy logs it and no
 * Referer carries it (docs/security.md "Invitations").
 */
function acceptUrl(request: FastifyRequest, corsOrigins: readonly string[], token: string): string {
  const origin = request.headers.origin;
  const base = origin && corsOrigins.includes(origin) ? origin : `${request.protocol}://${request.host}`;
  return `${base}/invite#${token}`;
}

/** Members (roles, removal) and invitations of an organization (api.md "Members"), owners and admins. */
export function registerMemberRoutes(app: GatewayApp, deps: GatewayDeps): void {
  const { identity } = deps.clients;
  registerRoleRoutes(app, deps);

  app.get(
    "/api/organizations/:id/members",
    op("listMembers", "The members of an organization with their roles, newest accounts first", {
      ...pageByIdSchema(MemberView, Type.Object(ListQuery, { additionalProperties: false })),
    }),
    pageById(identity.listMembers, "organizationId", "members", memberView),
  );

  app.post(
    "/api/organizations/:id/members",
    op("addMember", "Add a signed-up user to an organization with a role (owners and admins; owners add owners)", {
      params: IdParams,
      body: Body({ email: Email, role: Role }),
      response: { 201: ref(MemberView), ...errorResponses(400, 401, 403, 404, 409) },
    }),
    async (request, reply) => {
      const r = await identity.addMember(
        { organizationId: request.params.id, email: request.body.email, role: request.body.role },
        rpcOptions(request),
      );
      if (!r.member) throw new Error("identity returned no member");
      return reply.code(201).send(memberView(r.member));
    },
  );

  app.patch(
    "/api/organizations/:id/members/:userId",
    op("changeMemberRole", "Change a member's role (owners and admins; only owners touch owners; one owner stays)", {
      params: MemberParams,
      body: Body({ role: Role }),
      response: answers(MemberView, 400, 401, 403, 404, 409),
    }),
    async (request) => {
      const r = await identity.changeMemberRole(
        { organizationId: request.params.id, userId: request.params.userId, role: request.body.role },
        rpcOptions(request),
      );
      if (!r.member) throw new Error("identity returned no member");
      return memberView(r.member);
    },
  );

  app.delete(
    "/api/organizations/:id/members/:userId",
    op("removeMember", "Remove a member, or leave (owners and admins remove others; one owner stays)", {
      params: MemberParams,
      response: answers(MemberView, 401, 403, 404, 409),
    }),
    async (request) => {
      const r = await identity.removeMember(
        { organizationId: request.params.id, userId: request.params.userId },
        rpcOptions(request),
      );
      if (!r.member) throw new Error("identity returned no member");
      return memberView(r.member);
    },
  );

  app.post(
    "/api/organizations/:id/invitations",
    op("createInvitation", "Invite an e-mail address with a role; the token and its link are shown once", {
      params: IdParams,
      body: Body({ email: Email, role: Role }),
      response: {
        201: Type.Object({
          invitation: ref(InvitationView),
          token: Type.String({ description: "inv_<id>_<secret>: single use, never shown again" }),
          acceptUrl: Type.String({
            description: "the console page that accepts it: /invite#<token> (a fragment: never sent to a server)",
          }),
        }),
        ...errorResponses(400, 401, 403, 404, 409),
      },
    }),
    async (request, reply) => {
      const r = await identity.createInvitation(
        { organizationId: request.params.id, email: request.body.email, role: request.body.role },
        rpcOptions(request),
      );
      return reply.code(201).send({
        invitation: invitationView(r.invitation),
        token: r.token,
        acceptUrl: acceptUrl(request, deps.corsOrigins ?? [], r.token),
      });
    },
  );

  app.get(
    "/api/organizations/:id/invitations",
    op("listInvitations", "The pending invitations of an organization, newest first (never their tokens)", {
      ...pageByIdSchema(InvitationView, Type.Object(ListQuery, { additionalProperties: false })),
    }),
    pageById(identity.listInvitations, "organizationId", "invitations", invitationView),
  );

  app.delete(
    "/api/organizations/:id/invitations/:invitationId",
    op("revokeInvitation", "Revoke a pending invitation at once", {
      params: InvitationParams,
      response: answers(InvitationView, 401, 403, 404, 409),
    }),
    async (request) => {
      const r = await identity.revokeInvitation(
        { organizationId: request.params.id, id: request.params.invitationId },
        rpcOptions(request),
      );
      return invitationView(r.invitation);
    },
  );

  app.post(
    "/api/invitations/accept",
    op("acceptInvitation", "Join the organization of an invitation made for your e-mail address", {
      body: Body({ token: Type.String({ minLength: 1, maxLength: 200 }) }),
      response: answers(AcceptedInvitationView, 400, 401, 403, 404, 409),
    }),
    async (request) => {
      const r = await identity.acceptInvitation({ token: request.body.token }, rpcOptions(request));
      if (!r.organization) throw new Error("identity returned no organization");
      return { organization: organizationView(r.organization), membership: membershipView(r.membership) };
    },
  );
}
