import { API_KEY_SCOPES } from "@kiln/contracts/api-key-scopes";
import Type, { type Static } from "typebox";
import { registerAudit } from "../audit/register-audit.js";
import { HttpError } from "../errors.js";
import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { listPage, pageOf } from "../http/list-page.js";
import { ACCESS_TOKEN_ONLY, answers, listAnswers, operation, operations } from "../http/operation.js";
import { principalOf, rpcOptions } from "../http/request.js";
import { Body, errorResponses, IdParams, ListQuery, ref, Timestamp } from "../schemas.js";
import { registerAuthRoutes } from "./auth-routes.js";
import { registerOrganizationRoutes } from "./organization-routes.js";
import {
  ApiKeyView,
  apiKeyView,
  membershipView,
  OnboardingView,
  organizationView,
  principalView,
  type SetupCheckView,
  SetupVerificationView,
  userView,
} from "./views.js";

type SetupCheckName = Static<typeof SetupCheckView>["name"];

const Name = Type.String({ minLength: 1, maxLength: 200 });
const OrganizationId = Type.String({ minLength: 1, maxLength: 100 });

const apiKeys = operations({ tags: ["api-keys"], stability: "non-public", security: ACCESS_TOKEN_ONLY });

/**
 * Sign-up, tokens, JWKS, onboarding, setup verification and API keys (api.md "Authentication",
 * "Identity"); first, the audit log's recorder (a hook every later route runs) and routes.
 */
export function registerIdentityRoutes(app: GatewayApp, deps: GatewayDeps): void {
  const { identity } = deps.clients;
  registerAudit(app, deps);

  registerAuthRoutes(app, deps);

  app.post(
    "/api/onboarding/complete",
    operation(
      { tags: ["onboarding"], stability: "beta", security: ACCESS_TOKEN_ONLY },
      "completeOnboarding",
      "Create the signed-in user's organization on the Free plan (idempotent per user)",
      {
        body: Body({ fullName: Name, organizationName: Name }),
        response: { 201: ref(OnboardingView), ...answers(OnboardingView, 400, 401, 403) },
      },
    ),
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
    operation(
      { tags: ["setup"], stability: "stable" },
      "verifySetup",
      "Check authentication and the organization (each check with its verdict)",
      {
        body: Body({ organizationId: Type.Optional(OrganizationId) }),
        response: answers(SetupVerificationView, 400, 401),
      },
    ),
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
    apiKeys("createApiKey", "Create an API key (organization owners and admins); the key is shown once", {
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
    }),
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
    apiKeys("listApiKeys", "List an organization's API keys, newest first", {
      querystring: Type.Object({ organizationId: OrganizationId, ...ListQuery }, { additionalProperties: false }),
      response: listAnswers(ApiKeyView, 400, 401, 403, 404),
    }),
    async (request) => {
      const q = request.query;
      const r = await identity.listApiKeys({ organizationId: q.organizationId, ...pageOf(q) }, rpcOptions(request));
      return listPage(r.apiKeys, apiKeyView, r.nextCursor);
    },
  );

  app.delete(
    "/api/api-keys/:id",
    apiKeys("revokeApiKey", "Revoke an API key at once", {
      params: IdParams,
      response: answers(ApiKeyView, 401, 403, 404),
    }),
    async (request) => {
      const r = await identity.revokeApiKey({ id: request.params.id }, rpcOptions(request));
      deps.authenticator.forgetApiKey(request.params.id);
      return apiKeyView(r.apiKey);
    },
  );

  registerOrganizationRoutes(app, deps);
}
