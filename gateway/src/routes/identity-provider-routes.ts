import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { registerSamlRoutes } from "./saml-routes.js";
import { registerScimRoutes } from "./scim-routes.js";

/**
 * The routes an organization's identity provider calls, outside /api: SCIM provisioning at
 * /scim/v2 (docs/scim.md) and the SAML service provider at /saml (docs/security.md "SAML sign-in").
 */
export function registerIdentityProviderRoutes(app: GatewayApp, deps: GatewayDeps): void {
  registerScimRoutes(app, deps);
  registerSamlRoutes(app, deps);
}
