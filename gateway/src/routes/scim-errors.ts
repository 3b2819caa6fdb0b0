import type { FastifyReply, FastifyRequest } from "fastify";
import { envelopeOf, withRetryAfter } from "../errors.js";

/** The media type of every SCIM answer (RFC 7644 §3.1). */
export const SCIM_MEDIA_TYPE = "application/scim+json";
export const ERROR_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:Error";

/** The `scimType` of RFC 7644 §3.12 that a 400 or 409 carries. */
export type ScimType =
  | "invalidFilter"
  | "invalidSyntax"
  | "invalidPath"
  | "invalidValue"
  | "noTarget"
  | "uniqueness"
  | "mutability"
  | "tooMany";

/** An error the SCIM edge answers with as it is. */
export class ScimError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly scimType?: ScimType,
  ) {
    super(message);
  }
}

export const invalidFilter = (detail: string) => new ScimError(400, detail, "invalidFilter");
export const invalidValue = (detail: string) => new ScimError(400, detail, "invalidValue");

/** The scimType of a service's refusal, by the contract's error code. */
const SCIM_TYPE_OF_CODE: Record<string, ScimType> = {
  invalid_argument: "invalidValue",
  already_exists: "uniqueness",
  failed_precondition: "mutability",
};

/** Every failure under /scim/v2 leaves as a SCIM error body (RFC 7644 §3.12) with its status. */
export function handleScimError(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  let status: number;
  let detail: string;
  let scimType: ScimType | undefined;
  let headers: Record<string, string> = {};
  if (error instanceof ScimError) {
    ({ status, scimType } = error);
    detail = error.message;
  } else {
    const envelope = envelopeOf(error, request.id);
    const { code, message, details } = envelope.body.error;
    status = envelope.status;
    headers = envelope.headers;
    scimType = status === 400 || status === 409 ? SCIM_TYPE_OF_CODE[code] : undefined;
    // The fields at fault, in the detail: SCIM's body has no place of its own for them.
    const fields = details.map((d) => `${d.field} ${d.issue}`).join("; ");
    detail = fields ? `${message}: ${fields}` : message;
    if (status >= 500) request.log.error({ err: error }, "SCIM request failed");
  }
  const body = { schemas: [ERROR_SCHEMA], status: String(status), ...(scimType && { scimType }), detail };
  return reply
    .code(status)
    .headers(withRetryAfter(status, headers, reply))
    .type(SCIM_MEDIA_TYPE)
    .send(JSON.stringify(body));
}
