import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { newId } from "@kiln/kit/ids";
import type { AuditEntryInput } from "@kiln/proto/audit";
import type { FastifyRequest } from "fastify";

/**
 * The audit entry of a SAML sign-in (docs/governance.md "Sign-ins"): the assertion consumer sets
 * what it learnt on the request as it goes, and the recorder writes `user.signed_in` or
 * `user.sign_in_failed` once the answer is known, in the organization whose IdP was used (not in
 * every organization of the user, as a password sign-in is: the IdP spoke for this one). A
 * request for an organization without enabled SAML sign-in records nothing: no organization's
 * log is written by an anonymous caller naming it.
 */
export interface SamlSignInAudit {
  organizationId: string;
  /** The NameID, lower-cased, once the response was read. */
  email: string;
  /** The signed-in user; empty until the sign-in succeeded. */
  userId: string;
}

declare module "fastify" {
  interface FastifyRequest {
    /** Set by POST /saml/:organizationId/acs once the organization's SAML sign-in is known. */
    samlSignIn: SamlSignInAudit | null;
  }
}

export function samlSignInEntry(
  request: FastifyRequest,
  audit: SamlSignInAudit,
  status: number,
): Omit<AuditEntryInput, "$typeName" | "$unknown"> {
  const success = status < 400 && audit.userId !== "";
  return {
    id: newId("aud"),
    organizationId: audit.organizationId,
    occurredAt: timestampFromDate(new Date()),
    actorType: success ? "user" : "anonymous",
    actorId: success ? audit.userId : "",
    action: success ? "user.signed_in" : "user.sign_in_failed",
    targetType: "user",
    targetId: audit.email,
    requestId: request.id,
    sourceAddress: request.ip,
    changedFields: [],
    outcome: success ? "success" : "failure",
  };
}
