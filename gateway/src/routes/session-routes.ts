import { timestampDate } from "@bufbuild/protobuf/wkt";
import Type from "typebox";
import { requireCsrfHeader, SESSION_COOKIE, sessionCookieOptions } from "../auth/session-cookie.js";
import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { operations } from "../http/operation.js";
import { rpcOptions } from "../http/request.js";
import { Body, errorResponses, Timestamp } from "../schemas.js";

const op = operations({ tags: ["auth"], stability: "non-public", public: true });

/**
 * The console's cookie session (docs/security.md "Console session"): sign in with e-mail and
 * password, the access token set as an httpOnly cookie and never returned; sign out clears it.
 */
export function registerSessionRoutes(app: GatewayApp, deps: GatewayDeps): void {
  const { identity } = deps.clients;

  app.post(
    "/api/session",
    op(
      "createSession",
      "Sign in to the console (send x-kiln-csrf: 1): sets the httpOnly session cookie, the token is not returned",
      {
        body: Body({
          email: Type.String({ minLength: 1, maxLength: 254 }),
          password: Type.String({ minLength: 1, maxLength: 256 }),
        }),
        response: { 201: Type.Object({ expiresAt: Timestamp }), ...errorResponses(400, 401, 403) },
      },
    ),
    async (request, reply) => {
      requireCsrfHeader(request);
      const r = await identity.issueToken(request.body, rpcOptions(request));
      const expires = r.expiresAt ? timestampDate(r.expiresAt) : undefined;
      reply.setCookie(SESSION_COOKIE, r.accessToken, sessionCookieOptions(request, expires));
      return reply.code(201).send({ expiresAt: expires?.toISOString() ?? "" });
    },
  );

  app.delete(
    "/api/session",
    op("deleteSession", "Sign out of the console (send x-kiln-csrf: 1): clears the session cookie", {
      response: { 200: Type.Object({ signedOut: Type.Literal(true) }), ...errorResponses(403) },
    }),
    async (request, reply) => {
      requireCsrfHeader(request);
      reply.clearCookie(SESSION_COOKIE, sessionCookieOptions(request));
      return { signedOut: true as const };
    },
  );
}
