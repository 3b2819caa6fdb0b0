import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { ErrorDetailSchema } from "@kiln/proto/rpc";
import { BusUnavailableError } from "../bus/bus.js";
import { DomainError, type ErrorKind, type FieldIssue } from "../errors.js";
import type { Logger } from "../logger.js";
import { isDuplicateKeyError, StoreUnavailableError } from "../store/store.js";

/** The one mapping of domain error kinds to Connect codes. */
export function codeOfKind(kind: ErrorKind): Code {
  switch (kind) {
    case "invalid_argument":
      return Code.InvalidArgument;
    case "not_found":
      return Code.NotFound;
    case "already_exists":
      return Code.AlreadyExists;
    case "failed_precondition":
      return Code.FailedPrecondition;
    case "permission_denied":
      return Code.PermissionDenied;
    case "unauthenticated":
      return Code.Unauthenticated;
    case "resource_exhausted":
      return Code.ResourceExhausted;
    case "unavailable":
      return Code.Unavailable;
    case "provider_error":
      return Code.Unknown;
    case "provider_timeout":
      return Code.DeadlineExceeded;
  }
}

const KIND_OF_CODE: Partial<Record<Code, ErrorKind>> = {
  [Code.InvalidArgument]: "invalid_argument",
  [Code.NotFound]: "not_found",
  [Code.AlreadyExists]: "already_exists",
  [Code.FailedPrecondition]: "failed_precondition",
  [Code.PermissionDenied]: "permission_denied",
  [Code.Unauthenticated]: "unauthenticated",
  [Code.ResourceExhausted]: "resource_exhausted",
  [Code.Unavailable]: "unavailable",
  [Code.DeadlineExceeded]: "unavailable",
};

export function toConnectError(error: DomainError): ConnectError {
  const value = create(ErrorDetailSchema, { kind: error.kind, issues: error.details });
  return new ConnectError(error.message, codeOfKind(error.kind), undefined, [{ desc: ErrorDetailSchema, value }]);
}

/** What a store or bus outage (anywhere in the cause chain) tells the caller; undefined for any other error. */
export function outageOf(error: unknown): DomainError | undefined {
  for (let e: unknown = error; e instanceof Error; e = e.cause) {
    if (e instanceof StoreUnavailableError) {
      return new DomainError("unavailable", "the document store is unavailable; retry later");
    }
    if (e instanceof BusUnavailableError) {
      return new DomainError("unavailable", "the message bus is unavailable; retry later");
    }
  }
  return undefined;
}

/**
 * Server interceptor: domain errors become Connect errors with an ErrorDetail; a unique-key clash
 * becomes already_exists; a store or bus outage becomes unavailable (logged at warn, with its
 * cause); anything else is logged once here and reaches the caller only as "internal error".
 */
export function createErrorInterceptor(logger: Logger): Interceptor {
  return (next) => async (req) => {
    try {
      return await next(req);
    } catch (e) {
      if (e instanceof ConnectError) throw e;
      if (e instanceof DomainError) throw toConnectError(e);
      if (isDuplicateKeyError(e)) throw toConnectError(new DomainError("already_exists", "already exists"));
      const outage = outageOf(e);
      if (outage) {
        logger.warn({ err: e, rpc: req.url, requestId: req.header.get("x-request-id") }, outage.message);
        throw toConnectError(outage);
      }
      logger.error({ err: e, rpc: req.url, requestId: req.header.get("x-request-id") }, "internal error");
      throw new ConnectError("internal error", Code.Internal);
    }
  };
}

export interface RemoteError {
  kind: ErrorKind | "internal";
  message: string;
  details: FieldIssue[];
}

/** Client side: what a failed RPC said, in domain terms. */
export function remoteErrorOf(error: unknown): RemoteError {
  const ce = ConnectError.from(error);
  const [detail] = ce.findDetails(ErrorDetailSchema);
  const kind = (detail?.kind as ErrorKind | undefined) ?? KIND_OF_CODE[ce.code] ?? "internal";
  const message = kind === "internal" ? "internal error" : ce.rawMessage;
  return { kind, message, details: detail?.issues.map((i) => ({ field: i.field, issue: i.issue })) ?? [] };
}

/** Awaits a call to another service, rethrowing what it refused as the DomainError it stands for. */
export async function remote<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (e) {
    throw domainErrorOf(e) ?? e;
  }
}

/** Rethrows a failed RPC as the same domain error, so a service can pass another's answer on. */
export function domainErrorOf(error: unknown): DomainError | undefined {
  const r = remoteErrorOf(error);
  return r.kind === "internal" ? undefined : new DomainError(r.kind, r.message, r.details);
}
