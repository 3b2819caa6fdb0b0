/** Who may make an identity RPC: a signed-in user, or a Kiln service acting for the platform. */
import type { HandlerContext } from "@connectrpc/connect";
import { permissionDenied } from "@kiln/kit/errors";
import { principalOf } from "@kiln/kit/principal";

/** The calling user's id; any other caller is permission_denied. */
export function requireUser(ctx: HandlerContext): string {
  const p = principalOf(ctx);
  if (p.type !== "user") throw permissionDenied("this call needs a signed-in user");
  return p.id;
}

/**
 * A call only the deployment's own processes make (the gateway's sign-up, tokens, SCIM and SAML
 * endpoints), as the platform principal: a service token acting for an organization makes none.
 * `calls` names them in the refusal ("SCIM calls are", "SAML sign-in calls are").
 */
export function requirePlatform(ctx: HandlerContext, calls = "this call is"): void {
  const p = principalOf(ctx);
  if (p.type !== "service") throw permissionDenied(`${calls} reserved to Kiln services`);
  if (p.organizationId !== undefined) {
    throw permissionDenied(`${calls} reserved to Kiln services acting for the platform, not an organization`);
  }
}
