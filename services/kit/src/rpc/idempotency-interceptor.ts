import { createHash } from "node:crypto";
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import type { Interceptor, UnaryResponse } from "@connectrpc/connect";
import { kPrincipal, principalKey } from "../auth/principal.js";
import { failedPrecondition, invalidArgument, unauthenticated } from "../errors.js";
import { type Collection, isDuplicateKeyError, type Store } from "../store/store.js";
import { toConnectError } from "./connect-errors.js";

/** Request header carrying the client's key (the gateway forwards REST's Idempotency-Key). */
export const IDEMPOTENCY_KEY_HEADER = "idempotency-key";
/** Response header set when the answer is a replay of the first one. */
export const IDEMPOTENT_REPLAYED_HEADER = "idempotent-replayed";

interface IdempotencyDoc {
  _id: string;
  requestHash: string;
  state: "in_flight" | "done";
  /** The first response, protobuf binary in base64. */
  response: string | null;
  createdAt: Date;
}

export interface IdempotencyOptions {
  store: Store;
  /** Full method paths that honour keys, e.g. "/kiln.catalog.v1.CatalogService/CreatePrompt". */
  methods: ReadonlySet<string>;
  /** How long a key is remembered; default 24 h (api.md "Conventions"). */
  ttlMs?: number;
  /** An in-flight record older than this is taken as abandoned (its process died); default 5 min. */
  abandonedAfterMs?: number;
  now?: () => Date;
}

const COLLECTION = "idempotency_keys";

/**
 * Forgets the keys of calls that were still running when the process serving this store died. Only
 * for a store one process alone serves (the embedded mode, at start-up): their calls can never
 * answer, so a retry with the same key runs again at once instead of waiting for the abandonment
 * delay. Returns how many keys it released.
 */
export async function releaseInFlightKeys(store: Store): Promise<number> {
  const { deletedCount } = await store.collection<IdempotencyDoc>(COLLECTION).deleteMany({ state: "in_flight" });
  return deletedCount;
}

const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

const sha256 = (data: string | Uint8Array) => createHash("sha256").update(data).digest("hex");

/**
 * Server interceptor for creating and running RPCs: a retry with the same key and the same request
 * replays the first response (with `idempotent-replayed: true`); the same key with another request
 * is invalid_argument; a retry while the first call is still running is failed_precondition (409).
 * Keys are scoped to the principal and the method. The claim is an insert on a unique `_id`, which
 * is atomic on every backend; a failed call releases its key so that it can be retried.
 */
export function createIdempotencyInterceptor(options: IdempotencyOptions): Interceptor {
  const ttlMs = options.ttlMs ?? 24 * 3_600_000;
  const abandonedAfterMs = options.abandonedAfterMs ?? 5 * 60_000;
  const now = options.now ?? (() => new Date());
  let records: Collection<IdempotencyDoc> | undefined;
  const collection = () => {
    records ??= options.store.collection<IdempotencyDoc>(COLLECTION);
    return records;
  };

  return (next) => async (req) => {
    const key = req.header.get(IDEMPOTENCY_KEY_HEADER);
    if (key === null || req.stream) return next(req);
    const path = `/${req.service.typeName}/${req.method.name}`;
    if (!options.methods.has(path)) return next(req);
    if (!KEY_PATTERN.test(key)) {
      throw toConnectError(
        invalidArgument("invalid Idempotency-Key", [
          { field: "Idempotency-Key", issue: "must be 1 to 255 visible ASCII characters" },
        ]),
      );
    }
    const principal = req.contextValues.get(kPrincipal);
    if (!principal) throw toConnectError(unauthenticated("missing credentials"));

    const id = sha256(`${principalKey(principal)}\n${path}\n${key}`);
    const requestHash = sha256(toBinary(req.method.input, req.message));
    const claim: IdempotencyDoc = { _id: id, requestHash, state: "in_flight", response: null, createdAt: now() };

    for (let attempt = 0; ; attempt++) {
      try {
        await collection().insertOne(claim);
        break;
      } catch (e) {
        if (!isDuplicateKeyError(e) || attempt > 0) throw e;
      }
      const existing = await collection().findOne({ _id: id });
      if (!existing) continue;
      const age = claim.createdAt.getTime() - existing.createdAt.getTime();
      const stale = age > ttlMs || (existing.state === "in_flight" && age > abandonedAfterMs);
      if (stale) {
        await collection().deleteOne({ _id: id, createdAt: existing.createdAt });
        continue;
      }
      if (existing.requestHash !== requestHash) {
        throw toConnectError(
          invalidArgument("this Idempotency-Key was used with a different request", [
            { field: "Idempotency-Key", issue: "reused with another body" },
          ]),
        );
      }
      if (existing.state === "in_flight" || existing.response === null) {
        throw toConnectError(failedPrecondition("a request with this Idempotency-Key is still in flight"));
      }
      // The protocol answers in the content type it was asked in (Connect, gRPC, gRPC-Web alike).
      const header = new Headers({ [IDEMPOTENT_REPLAYED_HEADER]: "true" });
      const contentType = req.header.get("content-type");
      if (contentType) header.set("content-type", contentType);
      const replay: UnaryResponse = {
        stream: false,
        service: req.service,
        method: req.method,
        header,
        trailer: new Headers(),
        message: fromBinary(req.method.output, Buffer.from(existing.response, "base64")),
      };
      return replay;
    }

    let res: Awaited<ReturnType<typeof next>>;
    try {
      res = await next(req);
    } catch (e) {
      await collection().deleteOne({ _id: id, requestHash });
      throw e;
    }
    if (!res.stream) {
      const response = Buffer.from(toBinary(req.method.output, res.message)).toString("base64");
      await collection().updateOne({ _id: id }, { $set: { state: "done", response } });
    }
    return res;
  };
}
