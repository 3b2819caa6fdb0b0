/**
 * Domain errors: a closed `kind` and data. Services throw these; one table in `rpc/connect-errors`
 * maps them to Connect codes and one table in the gateway maps Connect codes to HTTP (docs/architecture.md "Errors").
 */
import type { FieldIssue } from "@kiln/contracts/field-issues";

/** One problem with one field, as in the REST error envelope: `{ field: "variables.city", issue: "is required" }`. */
export type { FieldIssue };

export type ErrorKind =
  | "invalid_argument"
  | "not_found"
  | "already_exists"
  | "failed_precondition"
  | "permission_denied"
  | "unauthenticated"
  | "resource_exhausted"
  | "unavailable"
  | "provider_error"
  | "provider_timeout";

export class DomainError extends Error {
  constructor(
    readonly kind: ErrorKind,
    message: string,
    readonly details: FieldIssue[] = [],
    /** A refusal that lifts at a known time (a plan's month): how long to wait, as `Retry-After`. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = "DomainError";
  }
}

export const invalidArgument = (message: string, details: FieldIssue[] = []) =>
  new DomainError("invalid_argument", message, details);
export const notFound = (what: string) => new DomainError("not_found", `${what} not found`);
export const alreadyExists = (message: string, details: FieldIssue[] = []) =>
  new DomainError("already_exists", message, details);
export const failedPrecondition = (message: string, details: FieldIssue[] = []) =>
  new DomainError("failed_precondition", message, details);
export const permissionDenied = (message: string) => new DomainError("permission_denied", message);
export const unauthenticated = (message: string) => new DomainError("unauthenticated", message);
export const resourceExhausted = (message: string, retryAfterSeconds?: number) =>
  new DomainError("resource_exhausted", message, [], retryAfterSeconds);
