import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { jsonDepthExceeds, MAX_BODY_DEPTH } from "../json-depth.js";
import { handleScimError, SCIM_MEDIA_TYPE, ScimError } from "./scim-errors.js";
import { registerScimGroupRoutes } from "./scim-group-routes.js";
import { registerScimMetaRoutes } from "./scim-meta-routes.js";
import { registerScimUserRoutes } from "./scim-user-routes.js";

const SCIM_TOKEN = /^Bearer\s+(scim_\S+)\s*$/i;

/**
 * SCIM 2.0 at /scim/v2 (docs/scim.md): authenticated by an organization's SCIM token only (an API
 * key or a user's token is refused, and a SCIM token is no credential on /api), SCIM bodies in and
 * out, SCIM error bodies for every failure.
 */
export function registerScimRoutes(app: GatewayApp, deps: GatewayDeps): void {
  app.register(
    async (instance) => {
      // The plugin's instance is the gateway's, with its logger and type provider.
      const scim = instance as unknown as GatewayApp;
      scim.decorateRequest("scimToken", "");
      scim.addContentTypeParser(SCIM_MEDIA_TYPE, { parseAs: "string" }, (_req, raw, done) => {
        const text = typeof raw === "string" ? raw : raw.toString("utf8");
        if (text.trim() === "") return done(null, {});
        if (jsonDepthExceeds(text)) {
          return done(new ScimError(400, `the body nests more than ${MAX_BODY_DEPTH} levels`, "invalidSyntax"));
        }
        try {
          done(null, JSON.parse(text));
        } catch {
          done(new ScimError(400, "the request body is not valid JSON", "invalidSyntax"));
        }
      });
      scim.setErrorHandler((error, request, reply) => handleScimError(error, request, reply));
      scim.setNotFoundHandler((request, reply) =>
        handleScimError(new ScimError(404, `no resource ${request.url.split("?")[0]}`), request, reply),
      );
      scim.addHook("onRequest", async (request, reply) => {
        const m = SCIM_TOKEN.exec(request.headers.authorization ?? "");
        if (!m?.[1]) {
          reply.header("www-authenticate", 'Bearer realm="scim"');
          throw new ScimError(401, "send the organization's SCIM token: Authorization: Bearer scim_...");
        }
        request.scimToken = m[1];
      });
      registerScimUserRoutes(scim, deps);
      registerScimGroupRoutes(scim, deps);
      registerScimMetaRoutes(scim, deps);
    },
    { prefix: "/scim/v2" },
  );
}
