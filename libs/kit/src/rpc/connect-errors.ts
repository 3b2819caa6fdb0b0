import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { ErrorDetailSchema } from "@kiln/proto/rpc";
import { BusUnavailableError } from "../bus/bus.js";
import { DomainError, type ErrorKind, type FieldIssue } from "../errors.js";
import type { Logger } from "../logger.js";
import { isDuplicateKeyError, StoreUnavailableError } from "../store/store.js";

/** The one mapping of domain error kinds to Connect codes. */
const CODE_OF_KIND: Record<ErrorKind, Code> = {
  invalid_argument: Code.InvalidArgument,
  not_found: Code.NotFound,
  already_exists: Code.AlreadyExists,
  failed_precondition: Code.FailedPrecondition,
  permission_denied: Code.PermissionDenied,
  unauthenticated: Code.Unauthenticated,
  resource_exhausted: Code.ResourceExhausted,
  unavailable: Code.Unavailable,
  provider_error: Code.Unknown,
  provider_timeout: Code.DeadlineExceeded,
};

export const codeOfKind = (kind: ErrorKind): Code => CODE_OF_KIND[kind];

/**
 * The same mapping read back, for a failed call that carries no ErrorDetail: the provider kinds
 * are not guessed from a code (Unknown stays internal), and a deadline is a service unavailable.
 */
const KIND_OF_CODE = new Map<Code, ErrorKind>(
  (Object.entries(CODE_OF_KIND) as [ErrorKind, Code][])
    .filter(([kind]) => !kind.startsWith("provider_"))
    .map(([kind, code]) => [code, kind]),
).set(Code.DeadlineExceeded, "unavailable");

export function toConnectError(error: DomainError): ConnectError {
  const value = create(ErrorDetailSchema, { kind: error.kind, issues: error.details });
  // The wait travels as the error's metadata, which every transport keeps (headers or trailers).
  const metadata =
    error.retryAfterSeconds === undefined ? undefined : { [RETRY_AFTER]: String(error.retryAfterSeconds) };
  return new ConnectError(error.message, codeOfKind(error.kind), metadata, [{ desc: ErrorDetailSchema, value }]);
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
    const mapped = (e: unknown) => errorOf(e, req);
    try {
      const res = await next(req);
      // A server stream fails while it is read: its errors are mapped the same way.
      return res.stream ? { ...res, message: mapStreamErrors(res.message, mapped) } : res;
    } catch (e) {
      throw mapped(e);
    }
  };

  function errorOf(e: unknown, req: { url: string; header: Headers }): ConnectError {
    // A call to another service that failed because that service died: unavailable, not internal.
    if (e instanceof ConnectError)
      return e.findDetails(ErrorDetailSchema).length === 0 && isPeerGone(e) ? peerGone() : e;
    if (e instanceof DomainError) return toConnectError(e);
    if (isDuplicateKeyError(e)) return toConnectError(new DomainError("already_exists", "already exists"));
    const outage = outageOf(e);
    if (outage) {
      logger.warn({ err: e, rpc: req.url, requestId: req.header.get("x-request-id") }, outage.message);
      return toConnectError(outage);
    }
    logger.error({ err: e, rpc: req.url, requestId: req.header.get("x-request-id") }, "internal error");
    return new ConnectError("internal error", Code.Internal);
  }
}

async function* mapStreamErrors<T>(messages: AsyncIterable<T>, mapped: (e: unknown) => ConnectError) {
  try {
    yield* messages;
  } catch (e) {
    throw mapped(e);
  }
}

export interface RemoteError {
  kind: ErrorKind | "internal";
  message: string;
  details: FieldIssue[];
  /** The wait the refusing service named (DomainError.retryAfterSeconds). */
  retryAfterSeconds?: number;
}

const RETRY_AFTER = "kiln-retry-after";

function retryAfterOf(ce: ConnectError): number | undefined {
  const text = ce.metadata.get(RETRY_AFTER);
  const seconds = text === null ? Number.NaN : Number(text);
  return Number.isSafeInteger(seconds) && seconds >= 0 ? seconds : undefined;
}

const PEER_GONE_MESSAGE = "a service is unavailable; retry later";
const peerGone = () => toConnectError(new DomainError("unavailable", PEER_GONE_MESSAGE));

/** Codes a call gets from its own transport when the peer went away (connect-node's mapping of a reset or close). */
const PEER_GONE_CODES = new Set([Code.Unavailable, Code.Aborted, Code.Canceled]);

/**
 * A call that failed because its peer died or its connection broke (a kill -9, a reset, a refused
 * connection, an HTTP/2 stream CANCEL or a session destroyed), not because the peer answered: what
 * such a failure carries is a Node error (with its string `code`) in the cause chain, or the
 * transport's own "http/2 ..." message. A server's answer crosses the wire with neither.
 */
export function isPeerGone(ce: ConnectError): boolean {
  if (PEER_GONE_CODES.has(ce.code)) return true;
  if (/^http\/2 |stream closed|session (closed|destroyed)|socket hang up/i.test(ce.rawMessage)) return true;
  for (let e: unknown = ce.cause; e instanceof Error; e = e.cause) {
    if (typeof (e as { code?: unknown }).code === "string") return true;
  }
  return false;
}

/** Client side: what a failed RPC said, in domain terms. */
export function remoteErrorOf(error: unknown): RemoteError {
  const ce = ConnectError.from(error);
  const [detail] = ce.findDetails(ErrorDetailSchema);
  if (!detail && isPeerGone(ce)) return { kind: "unavailable", message: PEER_GONE_MESSAGE, details: [] };
  const kind = (detail?.kind as ErrorKind | undefined) ?? KIND_OF_CODE.get(ce.code) ?? "internal";
  const message = kind === "internal" ? "internal error" : ce.rawMessage;
  const details = detail?.issues.map((i) => ({ field: i.field, issue: i.issue })) ?? [];
  const retryAfterSeconds = retryAfterOf(ce);
  return { kind, message, details, ...(retryAfterSeconds !== undefined && { retryAfterSeconds }) };
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
  return r.kind === "internal" ? undefined : new DomainError(r.kind, r.message, r.details, r.retryAfterSeconds);
}
