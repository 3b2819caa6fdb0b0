import { API_KEY_SCOPES } from "@kiln/kit/principal";
import Type, { type Static } from "typebox";
import { HttpError } from "../errors.js";
import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { principalOf, rpcOptions } from "../http/request.js";
import { Body, errorResponses, IdParams, List, ListQuery, ref, Timestamp } from "../schemas.js";
import {
  ApiKeyView,
  apiKeyView,
  iso,
  MembershipView,
  MemberView,
  membershipView,
  memberView,
  OnboardingView,
  OrganizationView,
  organizationView,
  principalView,
  type SetupCheckView,
  SetupVerificationView,
  UserView,
  userView,
} from "./views.js";

type SetupCheckName = Static<typeof SetupCheckView>["name"];

const Name = Type.String({ minLength: 1, maxLength: 200 });
const OrganizationId = Type.String({ minLength: 1, maxLength: 100 });

/** Sign-up, tokens, JWKS, onboarding, setup verification and API keys (api.md "Authentication", "Identity"). */
export function registerIdentityRoutes(app: GatewayApp, deps: GatewayDeps): void {
  const { identity } = deps.clients;

  if (deps.builtinIssuer) {
    app.post(
      "/api/auth/signup",
      {
        config: { public: true, stability: "non-public" },
        schema: {
          tags: ["auth"],
          operationId: "signUp",
          summary: "Create an account with the built-in issuer",
          security: [],
          body: Body({
            email: Type.String({ minLength: 3, maxLength: 254 }),
            password: Type.String({ minLength: 8, maxLength: 256 }),
            fullName: Type.Optional(Type.String({ maxLength: 200 })),
          }),
          response: {
            201: Type.Object({ user: ref(UserView), accessToken: Type.String(), expiresAt: Timestamp }),
            ...errorResponses(400, 409),
          },
        },
      },
      async (request, reply) => {
        const r = await identity.signUp(
          { ...request.body, fullName: request.body.fullName ?? "" },
          rpcOptions(request),
        );
        return reply
          .code(201)
          .send({ user: userView(r.user), accessToken: r.accessToken, expiresAt: iso(r.expiresAt) ?? "" });
      },
    );

    app.post(
      "/api/auth/token",
      {
        config: { public: true, stability: "non-public" },
        schema: {
          tags: ["auth"],
          operationId: "issueToken",
          summary: "Exchange e-mail and password for an access token",
          security: [],
          body: Body({
            email: Type.String({ minLength: 1, maxLength: 254 }),
            password: Type.String({ minLength: 1, maxLength: 256 }),
          }),
          response: {
            200: Type.Object({ accessToken: Type.String(), expiresAt: Timestamp }),
            ...errorResponses(400, 401),
          },
        },
      },
      async (request) => {
        const r = await identity.issueToken(request.body, rpcOptions(request));
        return { accessToken: r.accessToken, expiresAt: iso(r.expiresAt) ?? "" };
      },
    );

    app.get(
      "/.well-known/jwks.json",
      {
        config: { public: true, stability: "non-public" },
        schema: {
          tags: ["auth"],
          operationId: "getJwks",
          summary: "Public keys of the built-in issuer",
          security: [],
          response: {
            200: Type.Object({
              keys: Type.Array(
                Type.Object(
                  { kty: Type.String(), kid: Type.String(), alg: Type.String(), use: Type.String() },
                  { additionalProperties: true, description: "a public JWK" },
                ),
              ),
            }),
          },
        },
      },
      async (request, reply) => {
        const r = await identity.getJwks({}, rpcOptions(request));
        return reply.header("cache-control", "public, max-age=300").send(JSON.parse(r.jwksJson));
      },
    );
  }

  app.post(
    "/api/onboarding/complete",
    {
      config: { stability: "beta" },
      schema: {
        tags: ["onboarding"],
        operationId: "completeOnboarding",
        security: [{ accessToken: [] }],
        summary: "Create the signed-in user's organization on the Free plan (idempotent per user)",
        body: Body({ fullName: Name, organizationName: Name }),
        response: {
          200: ref(OnboardingView),
          201: ref(OnboardingView),
          ...errorResponses(400, 401, 403),
        },
      },
    },
    async (request, reply) => {
      if (principalOf(request).type !== "user") {
        throw new HttpError("permission_denied", "onboarding needs a signed-in user, not an API key");
      }
      const r = await identity.completeOnboarding(request.body, rpcOptions(request));
      if (!r.organization) throw new Error("identity returned no organization");
      return reply.code(r.created ? 201 : 200).send({
        user: userView(r.user),
        organization: organizationView(r.organization),
        membership: membershipView(r.membership),
      });
    },
  );

  app.post(
    "/api/setup/verify",
    {
      config: { stability: "stable" },
      schema: {
        tags: ["setup"],
        operationId: "verifySetup",
        summary: "Check authentication and the organization (each check with its verdict)",
        body: Body({ organizationId: Type.Optional(OrganizationId) }),
        response: { 200: ref(SetupVerificationView), ...errorResponses(400, 401) },
      },
    },
    async (request) => {
      const r = await identity.verifySetup({ organizationId: request.body.organizationId ?? "" }, rpcOptions(request));
      return {
        ok: r.ok,
        principal: principalView(r.principal),
        organization: r.organization ? organizationView(r.organization) : null,
        checks: r.checks.map((c) => ({ name: c.name as SetupCheckName, ok: c.ok, message: c.message })),
      };
    },
  );

  app.post(
    "/api/api-keys",
    {
      config: { stability: "non-public" },
      schema: {
        tags: ["api-keys"],
        operationId: "createApiKey",
        security: [{ accessToken: [] }],
        summary: "Create an API key (organization owners and admins); the key is shown once",
        body: Body({
          organizationId: OrganizationId,
          name: Name,
          scopes: Type.Array(Type.String({ enum: [...API_KEY_SCOPES] }), {
            minItems: 1,
            maxItems: API_KEY_SCOPES.length,
          }),
        }),
        response: {
          201: Type.Object({
            id: Type.String(),
            name: Type.String(),
            scopes: Type.Array(Type.String()),
            organizationId: Type.String(),
            key: Type.String({ description: "sk_<id>_<secret>: store it now, it is never shown again" }),
            createdAt: Timestamp,
          }),
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (request, reply) => {
      const r = await identity.createApiKey(request.body, rpcOptions(request));
      const k = apiKeyView(r.apiKey);
      return reply.code(201).send({
        id: k.id,
        name: k.name,
        scopes: k.scopes,
        organizationId: k.organizationId,
        key: r.key,
        createdAt: k.createdAt,
      });
    },
  );

  app.get(
    "/api/api-keys",
    {
      config: { stability: "non-public" },
      schema: {
        tags: ["api-keys"],
        operationId: "listApiKeys",
        security: [{ accessToken: [] }],
        summary: "List an organization's API keys, newest first",
        querystring: Type.Object({ organizationId: OrganizationId, ...ListQuery }, { additionalProperties: false }),
        response: { 200: List(ref(ApiKeyView)), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const { organizationId, limit, cursor } = request.query;
      const r = await identity.listApiKeys(
        { organizationId, limit: limit ? Number(limit) : 0, cursor: cursor ?? "" },
        rpcOptions(request),
      );
      return { data: r.apiKeys.map(apiKeyView), nextCursor: r.nextCursor || null };
    },
  );

  app.delete(
    "/api/api-keys/:id",
    {
      config: { stability: "non-public" },
      schema: {
        tags: ["api-keys"],
        operationId: "revokeApiKey",
        security: [{ accessToken: [] }],
        summary: "Revoke an API key at once",
        params: IdParams,
        response: { 200: ref(ApiKeyView), ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => {
      const r = await identity.revokeApiKey({ id: request.params.id }, rpcOptions(request));
      deps.authenticator.forgetApiKey(request.params.id);
      return apiKeyView(r.apiKey);
    },
  );

  registerOrganizationRoutes(app, deps);
}

const OrganizationWithRole = Type.Object({
  organization: ref(OrganizationView),
  membership: Type.Union([ref(MembershipView), Type.Null()], { description: "the caller's; null for API keys" }),
});

/** The organization, its settings and its members (non-public: console and administration; docs/labels.md). */
function registerOrganizationRoutes(app: GatewayApp, deps: GatewayDeps): void {
  const { identity } = deps.clients;
  const config = { stability: "non-public" as const };
  const tags = ["organizations"];

  app.get(
    "/api/organizations/:id",
    {
      config,
      schema: {
        tags,
        operationId: "getOrganization",
        summary: "An organization you are a member of (or your API key's), with your membership",
        params: IdParams,
        response: { 200: OrganizationWithRole, ...errorResponses(401, 403, 404) },
      },
    },
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
    {
      config,
      schema: {
        tags,
        operationId: "updateOrganization",
        security: [{ accessToken: [] }],
        summary: "Rename an organization or change its settings (owners and admins)",
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
            }),
          ),
        }),
        response: { 200: ref(OrganizationView), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const protectedLabels = request.body.settings?.protectedLabels;
      const r = await identity.updateOrganization(
        {
          organizationId: request.params.id,
          name: request.body.name,
          setProtectedLabels: protectedLabels !== undefined,
          protectedLabels: protectedLabels ?? [],
        },
        rpcOptions(request),
      );
      if (!r.organization) throw new Error("identity returned no organization");
      return organizationView(r.organization);
    },
  );

  app.get(
    "/api/organizations/:id/members",
    {
      config,
      schema: {
        tags,
        operationId: "listMembers",
        security: [{ accessToken: [] }],
        summary: "The members of an organization with their roles, newest first",
        params: IdParams,
        querystring: Type.Object(ListQuery, { additionalProperties: false }),
        response: { 200: List(ref(MemberView)), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const r = await identity.listMembers(
        {
          organizationId: request.params.id,
          limit: request.query.limit ? Number(request.query.limit) : 0,
          cursor: request.query.cursor ?? "",
        },
        rpcOptions(request),
      );
      return { data: r.members.map(memberView), nextCursor: r.nextCursor || null };
    },
  );

  app.post(
    "/api/organizations/:id/members",
    {
      config,
      schema: {
        tags,
        operationId: "addMember",
        security: [{ accessToken: [] }],
        summary: "Add a signed-up user to an organization with a role (owners and admins; owners add owners)",
        params: IdParams,
        body: Body({
          email: Type.String({ minLength: 1, maxLength: 254 }),
          role: Type.Union([Type.Literal("owner"), Type.Literal("admin"), Type.Literal("member")]),
        }),
        response: { 201: ref(MemberView), ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request, reply) => {
      const r = await identity.addMember(
        { organizationId: request.params.id, email: request.body.email, role: request.body.role },
        rpcOptions(request),
      );
      if (!r.member) throw new Error("identity returned no member");
      return reply.code(201).send(memberView(r.member));
    },
  );
}
