import Type from "typebox";
import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { operations } from "../http/operation.js";
import { rpcOptions } from "../http/request.js";
import { Body, errorResponses, ref, Timestamp } from "../schemas.js";
import { registerSessionRoutes } from "./session-routes.js";
import { iso, MembershipView, membershipView, UserView, userView } from "./views.js";

/** The e-mail and password of a body; sign-up asks for longer ones than a token exchange. */
const credentials = (min: { email: number; password: number }) => ({
  email: Type.String({ minLength: min.email, maxLength: 254 }),
  password: Type.String({ minLength: min.password, maxLength: 256 }),
});

const op = operations({ tags: ["auth"], stability: "non-public", public: true });

/** The built-in issuer's sign-up, token and JWKS routes (docs/api.md "Routes outside /api"), when it is on. */
export function registerAuthRoutes(app: GatewayApp, deps: GatewayDeps): void {
  if (!deps.builtinIssuer) return;
  const { identity } = deps.clients;
  registerSessionRoutes(app, deps);

  app.post(
    "/api/auth/signup",
    op("signUp", "Create an account with the built-in issuer", {
      body: Body({
        ...credentials({ email: 3, password: 8 }),
        fullName: Type.Optional(Type.String({ maxLength: 200 })),
        invitationToken: Type.Optional(
          Type.String({
            minLength: 1,
            maxLength: 200,
            description: "join the invitation's organization (for this e-mail address) instead of onboarding",
          }),
        ),
      }),
      response: {
        201: Type.Object({
          user: ref(UserView),
          accessToken: Type.String(),
          expiresAt: Timestamp,
          membership: Type.Optional(ref(MembershipView)),
        }),
        ...errorResponses(400, 403, 404, 409),
      },
    }),
    async (request, reply) => {
      const { invitationToken, fullName, ...credentials } = request.body;
      const r = await identity.signUp(
        { ...credentials, fullName: fullName ?? "", invitationToken: invitationToken ?? "" },
        rpcOptions(request),
      );
      return reply.code(201).send({
        user: userView(r.user),
        accessToken: r.accessToken,
        expiresAt: iso(r.expiresAt) ?? "",
        // Only a sign-up with an invitation joins an organization.
        ...(r.membership && { membership: membershipView(r.membership) }),
      });
    },
  );

  app.post(
    "/api/auth/token",
    op("issueToken", "Exchange e-mail and password for an access token", {
      body: Body(credentials({ email: 1, password: 1 })),
      response: {
        200: Type.Object({ accessToken: Type.String(), expiresAt: Timestamp }),
        ...errorResponses(400, 401),
      },
    }),
    async (request) => {
      const r = await identity.issueToken(request.body, rpcOptions(request));
      return { accessToken: r.accessToken, expiresAt: iso(r.expiresAt) ?? "" };
    },
  );

  app.get(
    "/.well-known/jwks.json",
    op("getJwks", "Public keys of the built-in issuer", {
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
    }),
    async (request, reply) => {
      const r = await identity.getJwks({}, rpcOptions(request));
      return reply.header("cache-control", "public, max-age=300").send(JSON.parse(r.jwks?.json ?? "{}"));
    },
  );
}
