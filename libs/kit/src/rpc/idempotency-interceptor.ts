import { createHash } from "node:crypto";
import { clone, type DescMessage, fromBinary, type Message, toBinary } from "@bufbuild/protobuf";
import { reflect } from "@bufbuild/protobuf/reflect";
import { createContextKey, type Interceptor, type UnaryRequest, type UnaryResponse } from "@connectrpc/connect";
import { kPrincipal, principalKey } from "../auth/principal.js";
import { failedPrecondition, invalidArgument, unauthenticated } from "../errors.js";
import { type Collection, isDuplicateKeyError, type Store } from "../store/store.js";
import { toConnectError } from "./connect-errors.js";
import { createOwnerLeases } from "./idempotency-leases.js";
import { IDEMPOTENCY_TTL_MS, KEYS, RESPONSES } from "./idempotency-records.js";
import { createClaimSettler } from "./idempotency-settle.js";

export {
  ensureIdempotencyIndexes,
  IDEMPOTENCY_TTL_MS,
  startIdempotencySweeper,
  sweepIdempotencyRecords,
} from "./idempotency-records.js";

/** Request header carrying the client's key (the gateway forwards REST's Idempotency-Key). */
export const IDEMPOTENCY_KEY_HEADER = "idempotency-key";
/** Response header set when the answer is a replay of the first one. */
export const IDEMPOTENT_REPLAYED_HEADER = "idempotent-replayed";

/**
 * The call's own key while it holds its claim: its principal, method, Idempotency-Key and request,
 * hashed. A handler records what the call started under it (the execution service its run), so that
 * a retry whose claim did not survive a fault (its process died before the answer was kept, or the
 * call failed after its work was stored) finds that work instead of doing it again.
 */
export const kIdempotencyKey = createContextKey<string | undefined>(undefined, { description: "idempotency key" });

/** A claimed key. Its answer is an AnswerDoc of the same `_id`. */
interface IdempotencyDoc {
  _id: string;
  requestHash: string;
  /** "done" (with `response`) only in claims written before answers were kept apart. */
  state: "in_flight" | "done";
  /** The interceptor (one per process start) that claimed the key. */
  owner?: string;
  response: string | null;
  createdAt: Date;
}

export interface IdempotencyOptions {
  store: Store;
  /** Full method paths that honour keys, e.g. "/kiln.catalog.v1.CatalogService/CreatePrompt". */
  methods: ReadonlySet<string>;
  /** How long a key is remembered; default 24 h (api.md "Conventions"). */
  ttlMs?: number;
  /**
   * A claim that names no owner (written before owners had leases) older than this is taken as
   * abandoned; default 5 min. A claim with an owner is abandoned once its owner's lease ran out.
   */
  abandonedAfterMs?: number;
  /**
   * This process alone serves the store (the embedded mode): a key another process (an earlier
   * start, which crashed or stopped) left in flight can never answer, so it is abandoned at once
   * when a retry meets it instead of after `abandonedAfterMs`.
   */
  soleProcess?: boolean;
  /**
   * Response fields a method answers once and never again (a webhook's signing secret), by method
   * path: they are cleared before the answer is stored, and again from what a replay reads (answers
   * stored before this rule), so a replay answers everything but them.
   */
  secretFields?: Readonly<Record<string, readonly string[]>>;
  now?: () => Date;
}

/** The first response to a claimed key. */
interface AnswerDoc {
  _id: string;
  /** Protobuf binary in base64. */
  response: string;
  createdAt: Date;
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
  const ttlMs = options.ttlMs ?? IDEMPOTENCY_TTL_MS;
  const abandonedAfterMs = options.abandonedAfterMs ?? 5 * 60_000;
  const now = options.now ?? (() => new Date());
  const leases = createOwnerLeases({ store: options.store, now });
  const owner = leases.owner;
  const settler = createClaimSettler();
  const inFlight = () => toConnectError(failedPrecondition("a request with this Idempotency-Key is still in flight"));
  let records: Collection<IdempotencyDoc> | undefined;
  let answers: Collection<AnswerDoc> | undefined;
  const collection = () => {
    records ??= options.store.collection<IdempotencyDoc>(KEYS);
    return records;
  };
  /**
   * The first responses, one insert each beside the claim rather than an update of it: an update
   * by `_id` reads the whole collection on FerretDB, an insert does not.
   */
  const responses = () => {
    answers ??= options.store.collection<AnswerDoc>(RESPONSES);
    return answers;
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
    const claim: IdempotencyDoc = {
      _id: id,
      requestHash,
      state: "in_flight",
      owner,
      response: null,
      createdAt: now(),
    };

    const release = await leases.hold();
    const replay = await claimOrReplay(req).catch((e: unknown) => {
      release();
      throw e;
    });
    if (replay) {
      release();
      return replay;
    }
    req.contextValues.set(kIdempotencyKey, sha256(`${id}\n${requestHash}`));
    return runClaimed(next, req, { id, requestHash, path, createdAt: claim.createdAt }, release);

    /** Claims the key (taking over an abandoned claim), or answers with the replay of its first answer. */
    async function claimOrReplay(req: UnaryRequest): Promise<UnaryResponse | undefined> {
      for (let attempt = 0; ; attempt++) {
        try {
          await collection().insertOne(claim);
          settler.start(id);
          return undefined;
        } catch (e) {
          // Clashing again and again: other retries are taking the key over at the same time.
          if (!isDuplicateKeyError(e) || attempt >= 3) throw isDuplicateKeyError(e) ? inFlight() : e;
        }
        const existing = await collection().findOne({ _id: id });
        if (!existing) continue;
        // Answered: the response beside the claim (or, from before responses were kept apart, in it).
        const answered = existing.state === "done" ? existing : await responses().findOne({ _id: id });
        const age = claim.createdAt.getTime() - existing.createdAt.getTime();
        const abandoned =
          !answered &&
          (existing.owner === undefined
            ? age > abandonedAfterMs
            : existing.owner === owner
              ? !settler.holds(id)
              : options.soleProcess === true || !(await leases.isLive(existing.owner)));
        const stale = age > ttlMs || abandoned;
        if (stale) {
          // Taken over atomically: only the claim read here is deleted, and the insert that follows
          // is on a unique `_id`, so of several retries one wins and the others see its claim.
          await responses().deleteOne({ _id: id });
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
        // An empty answer is "" (an empty message encodes to no bytes): answered all the same.
        if (typeof answered?.response !== "string") throw inFlight();
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
          message: withoutSecrets(
            req.method.output,
            fromBinary(req.method.output, Buffer.from(answered.response, "base64")),
            options.secretFields?.[path],
          ),
        };
        return replay;
      }
    }
  };

  /** Runs a call whose key this process claimed, and keeps its answer (or releases the key when it failed). */
  async function runClaimed(
    next: Parameters<Interceptor>[0],
    req: Parameters<Parameters<Interceptor>[0]>[0],
    { id, requestHash, path, createdAt }: { id: string; requestHash: string; path: string; createdAt: Date },
    release: () => void,
  ) {
    let res: Awaited<ReturnType<typeof next>>;
    try {
      res = await next(req);
    } catch (e) {
      // The key is released so that a retry runs the call; when the store refuses the release,
      // the settler writes it later and the caller still gets the call's own error.
      await settler.end(id, () => collection().deleteOne({ _id: id, requestHash })).catch(() => undefined);
      throw e;
    } finally {
      release();
    }
    if (res.stream) {
      await settler.end(id, async () => undefined);
      return res;
    }
    const stored = withoutSecrets(req.method.output, res.message, options.secretFields?.[path]);
    const response = Buffer.from(toBinary(req.method.output, stored)).toString("base64");
    const answer = { _id: id, response, createdAt };
    // The call ran: its answer goes back even when the store refuses to keep it now (the settler
    // keeps it later, and retries meanwhile answer 409). An expired answer whose claim went first
    // (deleted out of order) is replaced, not a failure.
    await settler
      .end(id, () =>
        responses()
          .insertOne(answer)
          .catch(async (e: unknown) => {
            if (!isDuplicateKeyError(e)) throw e;
            await responses().replaceOne({ _id: id }, answer);
          }),
      )
      .catch(() => undefined);
    return res;
  }
}

/** A copy of `message` with the named top-level fields cleared; `message` itself when none are named. */
function withoutSecrets(schema: DescMessage, message: Message, fields: readonly string[] | undefined): Message {
  if (!fields || fields.length === 0) return message;
  const copy = clone(schema, message);
  const r = reflect(schema, copy);
  for (const name of fields) {
    const field = schema.fields.find((f) => f.localName === name);
    // A misnamed field would silently store the secret: refuse loudly instead.
    if (!field) throw new Error(`${schema.typeName} has no field "${name}"`);
    r.clear(field);
  }
  return copy;
}
