import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { ConnectError } from "@connectrpc/connect";
import { remoteErrorOf } from "@kiln/kit/rpc/errors";
import type { GetSamlProviderResponse } from "@kiln/proto/saml";
import type { FastifyReply, FastifyRequest } from "fastify";
import Type from "typebox";
import { SESSION_COOKIE, sessionCookieOptions } from "../auth/session-cookie.js";
import { HttpError } from "../errors.js";
import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { operations } from "../http/operation.js";
import { rpcOptions } from "../http/request.js";
import { refuse } from "../saml/saml-page.js";
import { authorizeUrl, metadataXml, newRequestId, SamlRefusal, spUrlsOf, verifyResponse } from "../saml/saml-sp.js";
import { errorResponses } from "../schemas.js";
import { originOf } from "./saml-settings-routes.js";

/**
 * The SAML service provider's endpoints (docs/api.md "SAML sign-in", docs/security.md): public
 * routes outside /api, one set per organization. The login sends the browser to the IdP with an
 * AuthnRequest (HTTP-Redirect) and an opaque RelayState that identity keeps; the assertion consumer
 * takes the IdP's signed response (HTTP-POST), checks it (saml/saml-sp.ts), has identity sign the
 * user in, sets the console's session cookie as POST /api/session does and sends the browser on.
 */
const Params = Type.Object({ organizationId: Type.String({ pattern: "^org_[0-9a-f]{32}$", maxLength: 36 }) });
const SAML_BODY_BYTES = 512 * 1024;

const op = operations({ tags: ["auth"], stability: "non-public", public: true });

/** A path on this origin: one leading "/", not "//" or "/\" (which browsers read as another host). */
export function sameOriginPath(value: string): boolean {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses.
  return /^\/(?![/\\])/.test(value) && value.length <= 2000 && !/[\u0000-\u001f\u007f\\]/.test(value);
}

const isState = (relayState: string) => /^sst_[0-9A-Za-z]{43}$/.test(relayState);

const REFUSALS = new Set(["unauthenticated", "not_found", "invalid_argument"]);

/** A check's or identity's refusal (replay, unknown state) as the route's 401; anything else goes on as an error. */
function asRefusal(e: unknown, what: string): HttpError {
  if (e instanceof SamlRefusal) return new HttpError("unauthenticated", e.message);
  if (!(e instanceof ConnectError)) throw e;
  const remote = remoteErrorOf(e);
  if (!REFUSALS.has(remote.kind)) throw e;
  return new HttpError("unauthenticated", `${what}: ${remote.message}`);
}

export function registerSamlRoutes(app: GatewayApp, deps: GatewayDeps): void {
  // The session a SAML sign-in opens is a token of the built-in issuer: without it, no SAML sign-in.
  if (!deps.builtinIssuer) return;
  const { saml } = deps.clients;

  async function providerOf(request: FastifyRequest, organizationId: string): Promise<GetSamlProviderResponse> {
    try {
      return await saml.getSamlProvider({ organizationId }, rpcOptions(request));
    } catch (e) {
      if (e instanceof ConnectError && remoteErrorOf(e).kind === "not_found") {
        throw new HttpError("not_found", "SAML sign-in is not enabled for this organization");
      }
      throw e;
    }
  }

  app.register(async (instance) => {
    const scope = instance as unknown as GatewayApp;
    scope.decorateRequest("samlSignIn", null);
    // As every documented route (/api's and /.well-known's): the stability the document declares.
    scope.addHook("onRequest", async (_request, reply) => {
      reply.header("x-api-stability", "non-public");
    });
    // The IdP's form: SAMLResponse and RelayState, URL-encoded.
    scope.addContentTypeParser(
      "application/x-www-form-urlencoded",
      { parseAs: "string", bodyLimit: SAML_BODY_BYTES },
      (_req, body, done) => done(null, Object.fromEntries(new URLSearchParams(String(body)))),
    );

    scope.get(
      "/saml/:organizationId/metadata",
      op("getSamlMetadata", "The SP metadata of the organization's SAML sign-in (XML), to give the IdP", {
        params: Params,
        produces: ["application/samlmetadata+xml"],
        response: { 200: Type.String({ description: "an EntityDescriptor" }), ...errorResponses(404) },
      }),
      async (request, reply) =>
        reply
          .type("application/samlmetadata+xml; charset=utf-8")
          .send(metadataXml(spUrlsOf(originOf(request), request.params.organizationId))),
    );

    scope.get(
      "/saml/:organizationId/login",
      op("startSamlSignIn", "Start an SP-initiated SAML sign-in: redirects (302) to the organization's IdP", {
        params: Params,
        querystring: Type.Object(
          {
            returnTo: Type.Optional(Type.String({ maxLength: 2000, description: "a path on this origin; default /" })),
          },
          { additionalProperties: false },
        ),
        response: {
          302: { description: "to the IdP's SSO URL, with SAMLRequest and RelayState", type: "null" },
          ...errorResponses(400, 404),
        },
      }),
      async (request, reply) => {
        const returnTo = request.query.returnTo ?? "/";
        const org = request.params.organizationId;
        try {
          if (!sameOriginPath(returnTo)) {
            throw new HttpError("invalid_argument", "returnTo must be a path on this origin", [
              { field: "returnTo", issue: "must be a path on this origin, such as /prompts" },
            ]);
          }
          const provider = await providerOf(request, org);
          const requestId = newRequestId();
          const { state } = await saml.saveSamlRequest(
            { organizationId: org, requestId, returnTo },
            rpcOptions(request),
          );
          const url = await authorizeUrl(provider, spUrlsOf(originOf(request), org), requestId, state);
          return reply.header("cache-control", "no-store").redirect(url, 302);
        } catch (e) {
          if (e instanceof HttpError) return refuse(request, reply, e);
          throw e;
        }
      },
    );

    scope.post(
      "/saml/:organizationId/acs",
      op(
        "consumeSamlResponse",
        "The assertion consumer (HTTP-POST): signs in and redirects (303) with the session cookie",
        {
          params: Params,
          consumes: ["application/x-www-form-urlencoded"],
          body: Type.Object({
            SAMLResponse: Type.String({
              minLength: 1,
              maxLength: SAML_BODY_BYTES,
              description: "base64, as the IdP posts it",
            }),
            RelayState: Type.Optional(Type.String({ maxLength: 2000 })),
          }),
          response: {
            303: { description: "to returnTo, with the session cookie", type: "null" },
            ...errorResponses(400, 401, 404),
          },
        },
      ),
      async (request, reply) => {
        try {
          return await consume(request.params.organizationId, request.body, request, reply);
        } catch (e) {
          if (e instanceof HttpError) return refuse(request, reply, e);
          throw e;
        }
      },
    );
  });

  async function consume(
    org: string,
    body: { SAMLResponse: string; RelayState?: string },
    request: FastifyRequest,
    reply: FastifyReply,
  ) {
    const provider = await providerOf(request, org);
    const audit = { organizationId: org, email: "", userId: "" };
    request.samlSignIn = audit;
    const relayState = body.RelayState ?? "";
    let requestId: string | undefined;
    let returnTo = sameOriginPath(relayState) ? relayState : "/";
    if (isState(relayState)) {
      try {
        ({ requestId, returnTo } = await saml.takeSamlRequest(
          { organizationId: org, state: relayState },
          rpcOptions(request),
        ));
      } catch (e) {
        throw asRefusal(e, "the sign-in's RelayState is unknown, used or expired (start again)");
      }
    }
    const sp = spUrlsOf(originOf(request), org);
    let verified: Awaited<ReturnType<typeof verifyResponse>>;
    try {
      verified = await verifyResponse(provider, sp, body.SAMLResponse, requestId);
    } catch (e) {
      throw asRefusal(e, "the SAML response was refused");
    }
    audit.email = verified.nameId.trim().toLowerCase();
    if (!requestId && !provider.allowIdpInitiated) {
      throw new HttpError(
        "unauthenticated",
        "IdP-initiated sign-in is not allowed for this organization (allowIdpInitiated)",
      );
    }
    const r = await saml
      .completeSamlSignIn(
        {
          organizationId: org,
          assertionId: verified.assertionId,
          assertionExpiresAt: timestampFromDate(verified.expiresAt),
          email: verified.nameId,
          fullName: verified.fullName,
          roleValues: provider.roleAttribute ? (verified.attributes[provider.roleAttribute] ?? []) : [],
        },
        rpcOptions(request),
      )
      .catch((e: unknown) => {
        throw asRefusal(e, "the sign-in was refused");
      });
    audit.userId = r.userId;
    const expires = r.expiresAt ? timestampDate(r.expiresAt) : undefined;
    reply.setCookie(SESSION_COOKIE, r.accessToken, sessionCookieOptions(request, expires));
    return reply.header("cache-control", "no-store").redirect(returnTo, 303);
  }
}
