/** How the MongoDB store reports the driver's failures: unique clashes and an unreachable server. */
import {
  MongoBulkWriteError,
  MongoClientClosedError,
  MongoNetworkError,
  MongoNotConnectedError,
  MongoOperationTimeoutError,
  MongoServerClosedError,
  MongoServerError,
  MongoServerSelectionError,
  MongoTopologyClosedError,
} from "mongodb";
import { isPlainObject } from "./assert-portable.js";
import { DuplicateKeyError, StoreUnavailableError } from "./store.js";

/**
 * FerretDB 1.24 reports a unique clash found while updating (update, replace, findAndModify) as
 * InternalError (code 1) carrying the SQL backend's text rather than as E11000.
 */
const BACKEND_UNIQUE_VIOLATION = /UNIQUE constraint failed|duplicate key value violates unique constraint/;

export async function run<R>(namespace: string, op: () => Promise<R>): Promise<R> {
  try {
    return await op();
  } catch (e) {
    throw toStoreError(e, namespace);
  }
}

/**
 * Server answers the driver itself treats as transient (its retryable-read codes): HostUnreachable,
 * HostNotFound, NetworkTimeout, ShutdownInProgress, PrimarySteppedDown, ExceededTimeLimit,
 * ReadConcernMajorityNotAvailableYet, SocketException, NotWritablePrimary, InterruptedAtShutdown,
 * InterruptedDueToReplStateChange, NotPrimaryNoSecondaryOk, NotPrimaryOrSecondary.
 */
const UNAVAILABLE_CODES = new Set([6, 7, 89, 91, 189, 262, 134, 9001, 10107, 11600, 11602, 13435, 13436]);

/**
 * Socket errors the driver lets through as they are (seen: EPIPE, "This socket has been ended by
 * the other party", writing to a connection the server closed as it stopped).
 */
const SOCKET_ERRORS = new Set([
  "EPIPE",
  "ECONNRESET",
  "ECONNREFUSED",
  "ECONNABORTED",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
]);

/** The server could not be reached, or is going away: a later try may succeed. */
export function isMongoUnavailable(e: unknown): boolean {
  // An insertMany whose connection failed: the driver wraps its own error, kept as errorResponse.
  if (e instanceof MongoBulkWriteError && e.errorResponse instanceof Error) return isMongoUnavailable(e.errorResponse);
  if (e instanceof MongoServerError) return UNAVAILABLE_CODES.has(Number(e.code));
  if (e instanceof Error && SOCKET_ERRORS.has(String((e as NodeJS.ErrnoException).code))) return true;
  // MongoNetworkError covers a refused or lost connection, a socket timeout and a cleared pool.
  return (
    e instanceof MongoNetworkError ||
    e instanceof MongoServerSelectionError ||
    e instanceof MongoTopologyClosedError ||
    e instanceof MongoClientClosedError ||
    e instanceof MongoServerClosedError ||
    e instanceof MongoNotConnectedError ||
    e instanceof MongoOperationTimeoutError
  );
}

/**
 * Unique clashes become `DuplicateKeyError`, connection failures `StoreUnavailableError`;
 * everything else is rethrown as the driver raised it.
 */
function toStoreError(e: unknown, namespace: string): unknown {
  if (isMongoUnavailable(e)) return new StoreUnavailableError(e);
  if (!(e instanceof MongoServerError)) return e;
  const isDuplicate = e.code === 11000 || (e.code === 1 && BACKEND_UNIQUE_VIOLATION.test(e.message));
  if (!isDuplicate) return e;
  const message = e.code === 11000 ? e.message : `E11000 duplicate key error collection: ${namespace}`;
  const error = new DuplicateKeyError(message, keyValueOf(e));
  error.cause = e;
  return error;
}

/**
 * The positions of the documents an unordered insertMany refused for a unique clash, when that is
 * all it refused (undefined for any other failure).
 */
export function clashedPositions(e: unknown): number[] | undefined {
  if (!(e instanceof MongoBulkWriteError)) return undefined;
  const errors = [e.writeErrors].flat();
  const clash = (w: { code: number; errmsg?: string }) =>
    w.code === 11000 || (w.code === 1 && BACKEND_UNIQUE_VIOLATION.test(w.errmsg ?? ""));
  if (errors.length === 0 || !errors.every(clash)) return undefined;
  return errors.map((w) => w.index);
}

/** MongoDB reports the clashing key; FerretDB 1.24 does not. */
function keyValueOf(e: MongoServerError): Record<string, unknown> | undefined {
  const writeError = e instanceof MongoBulkWriteError ? [e.writeErrors].flat()[0]?.err : undefined;
  const keyValue: unknown = Reflect.get(writeError ?? e, "keyValue");
  return isPlainObject(keyValue) ? keyValue : undefined;
}
