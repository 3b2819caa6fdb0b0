import type { Membership, Organization } from "@kiln/proto/identity";
import Type from "typebox";
import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { listPage, pageOf } from "../http/list-page.js";
import { ACCESS_TOKEN_ONLY, answers, listAnswers, operations } from "../http/operation.js";
import { rpcOptions } from "../http/request.js";
import { Body, errorResponses, IdempotencyHeaders, IdParams, ListQuery, ref } from "../schemas.js";
import { registerAuditStreamRoutes } from "./audit-stream-routes.js";
import { registerMemberRoutes } from "./member-routes.js";
import { registerSamlSettingsRoutes } from "./saml-settings-routes.js";
import { registerScimTokenRoutes } from "./scim-token-routes.js";
import {
  MembershipView,
  membershipView,
  OrganizationMembershipView,
  OrganizationView,
  organizationView,
  UserView,
  userView,
} from "./views.js";

const Name = Type.String({ minLength: 1, maxLength: 200 });

const OrganizationWithRole = Type.Object({
  organization: ref(OrganizationView),
  membership: Type.Union([ref(MembershipView), Type.Null()], { description: "the caller's; null for API keys" }),
});

/** An organization and the caller's membership, as identity answers them (an organization always comes). */
function organizationMembershipView(r: { organization?: Organization; membership?: Membership }) {
  if (!r.organization) throw new Error("identity returned no organization");
  return { organization: organizationView(r.organization), membership: membershipView(r.membership) };
}

const op = operations({ tags: ["organizations"], stability: "non-public" });
const security = ACCESS_TOKEN_ONLY;

/**
 * The signed-in user's organizations (listing, creating another), an organization, its settings, and
 * (member-routes.ts) its members (non-public: console and administration; docs/labels.md).
 */
export function registerOrganizationRoutes(app: GatewayApp, deps: GatewayDeps): void {
  const { identity } = deps.clients;

  app.get(
    "/api/me",
    op("getMe", "The signed-in user: id, e-mail address and name", {
      security,
      response: answers(UserView, 401, 403),
    }),
    async (request) => userView((await identity.getMe({}, rpcOptions(request))).user),
  );

  app.get(
    "/api/organizations",
    op("listMyOrganizations", "The organizations you are a member of, with your membership, newest first", {
      security,
      querystring: Type.Object(ListQuery, { additionalProperties: false }),
      response: listAnswers(OrganizationMembershipView, 400, 401, 403),
    }),
    async (request) => {
      const r = await identity.listMyOrganizations(pageOf(request.query), rpcOptions(request));
      return listPage(r.organizations, organizationMembershipView, r.nextCursor);
    },
  );

  app.post(
    "/api/organizations",
    op("createOrganization", "Create another organization on the Free plan, with you as its owner", {
      security,
      headers: IdempotencyHeaders,
      body: Body({ name: Name }),
      response: { 201: ref(OrganizationMembershipView), ...errorResponses(400, 401, 403) },
    }),
    async (request, reply) => {
      const r = await identity.createOrganization({ name: request.body.name }, rpcOptions(request));
      return reply.code(201).send(organizationMembershipView(r));
    },
  );

  app.get(
    "/api/organizations/:id",
    op("getOrganization", "An organization you are a member of (or your API key's), with your membership", {
      params: IdParams,
      response: { 200: OrganizationWithRole, ...errorResponses(401, 403, 404) },
    }),
    async (request) => {
      const r = await identity.getOrganization({ organizationId: request.params.id }, rpcOptions(request));
      if (!r.organization) throw new Error("identity returned no organization");
      return {
        organization: organizationView(r.organization),
        membership: r.membership ? membershipView(r.membership) : null,
      };
    },
  );

  app.patch(
    "/api/organizations/:id",
    op("updateOrganization", "Rename an organization or change its settings (owners and admins)", {
      security,
      params: IdParams,
      body: Body({
        name: Type.Optional(Name),
        settings: Type.Optional(
          Body({
            protectedLabels: Type.Optional(
              Type.Array(Type.String({ maxLength: 40 }), {
                maxItems: 20,
                description: "labels only owners and admins move (API keys: labels:write)",
              }),
            ),
            auditRetentionDays: Type.Optional(
              Type.Integer({
                minimum: 30,
                maximum: 3650,
                description: "days the audit log keeps an entry (default 365)",
              }),
            ),
          }),
        ),
      }),
      response: answers(OrganizationView, 400, 401, 403, 404),
    }),
    async (request) => {
      const protectedLabels = request.body.settings?.protectedLabels;
      const r = await identity.updateOrganization(
        {
          organizationId: request.params.id,
          name: request.body.name,
          setProtectedLabels: protectedLabels !== undefined,
          protectedLabels: protectedLabels ?? [],
          auditRetentionDays: request.body.settings?.auditRetentionDays,
        },
        rpcOptions(request),
      );
      if (!r.organization) throw new Error("identity returned no organization");
      return organizationView(r.organization);
    },
  );

  registerMemberRoutes(app, deps);
  registerScimTokenRoutes(app, deps);
  registerSamlSettingsRoutes(app, deps);
  registerAuditStreamRoutes(app, deps);
}
