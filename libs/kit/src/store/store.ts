/**
 * The collection interface every service's store layer is written against. It is the subset of
 * the MongoDB driver that MongoDB, FerretDB 1.24 and the in-memory (mingo) backend all support
 * (docs/architecture.md "Store backends"): no transactions, no change streams, no TTL or partial indexes, no
 * `$lookup`/`$facet`, `$group` only with `$sum`/`$count`.
 *
 * Documents must not hold user-supplied free-form JSON as nested objects: keys with `.` or a
 * leading `$` are refused by FerretDB. Store such values as JSON text (see `encodeJson`).
 */

/** Every stored document has a string `_id` (a prefixed id from `@kiln/kit/ids`). */
export type Doc = { _id: string };

/** A MongoDB query document (equality, `$in`, `$nin`, `$lt`, `$lte`, `$gt`, `$gte`, `$ne`, `$exists`, `$and`, `$or`). */
export type Filter = Record<string, unknown>;

export type Sort = Record<string, 1 | -1>;

/** A MongoDB update document limited to the portable operators. */
export type Update = {
  $set?: Record<string, unknown>;
  $unset?: Record<string, "" | 1 | true>;
  $inc?: Record<string, number>;
  $setOnInsert?: Record<string, unknown>;
  $push?: Record<string, unknown>;
  $pull?: Record<string, unknown>;
  $addToSet?: Record<string, unknown>;
};

export interface IndexSpec {
  keys: Record<string, 1 | -1>;
  unique?: boolean;
  name?: string;
  /**
   * A TTL index (one Date key): MongoDB deletes a document this long after that date. FerretDB 1.24
   * and the embedded stores cannot, so they get the plain index and whoever sets this must also
   * delete expired documents itself (a sweep); the TTL is MongoDB's extra, never the only remover.
   */
  expireAfterSeconds?: number;
}

export interface FindOptions {
  sort?: Sort;
  limit?: number;
  skip?: number;
  /** Inclusion (1) or exclusion (0) projection, as in MongoDB. */
  projection?: Record<string, 0 | 1>;
}

export interface FindOneAndUpdateOptions {
  sort?: Sort;
  /** Default "after". */
  returnDocument?: "before" | "after";
  upsert?: boolean;
}

export interface UpdateResult {
  matchedCount: number;
  modifiedCount: number;
  /** Set when an upsert inserted a document. */
  upsertedId?: string;
}

export interface Collection<T extends Doc> {
  readonly name: string;
  /** Throws `DuplicateKeyError` when a unique index (or `_id`) clashes. */
  insertOne(doc: T): Promise<void>;
  /** Throws `DuplicateKeyError` on the first clash; earlier documents stay inserted (ordered insert). */
  insertMany(docs: T[]): Promise<void>;
  /**
   * Inserts, in one command, every document that clashes with no unique index (nor `_id`), and
   * resolves with the positions in `docs` of those that clashed (and were not inserted). Any other
   * failure rejects. For writers that tell "new" from "sent again" by the clash itself, with no
   * read first: FerretDB 1.24 on SQLite answers a read by anything but one `_id` by scanning the
   * collection, while a unique index is checked in its B-tree.
   */
  insertUnordered(docs: T[]): Promise<number[]>;
  findOne(filter: Filter, options?: Pick<FindOptions, "sort" | "projection">): Promise<T | null>;
  find(filter: Filter, options?: FindOptions): Promise<T[]>;
  countDocuments(filter: Filter): Promise<number>;
  updateOne(filter: Filter, update: Update, options?: { upsert?: boolean }): Promise<UpdateResult>;
  updateMany(filter: Filter, update: Update): Promise<UpdateResult>;
  /** Atomic on every backend: the building block for claims and state machines. */
  findOneAndUpdate(filter: Filter, update: Update, options?: FindOneAndUpdateOptions): Promise<T | null>;
  /** Replaces the whole document (keeping `_id`); throws `DuplicateKeyError` on a unique clash. */
  replaceOne(filter: Filter, doc: T, options?: { upsert?: boolean }): Promise<UpdateResult>;
  deleteOne(filter: Filter): Promise<{ deletedCount: number }>;
  deleteMany(filter: Filter): Promise<{ deletedCount: number }>;
}

export interface Store {
  /** Synchronous and cheap: the collection is created on first write. */
  collection<T extends Doc>(name: string): Collection<T>;
  /** Idempotent: creates the indexes that do not exist yet. */
  ensureIndexes(collection: string, indexes: IndexSpec[]): Promise<void>;
  /** Resolves when the backend answers; used by readiness checks. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** Thrown by both backends for a unique-key clash (MongoDB error code 11000). */
export class DuplicateKeyError extends Error {
  readonly code = 11000;
  constructor(
    message: string,
    /** The clashing key, when the backend reports it, e.g. `{ toolKey: "x" }`. */
    readonly keyValue?: Record<string, unknown>,
  ) {
    super(message);
    this.name = "DuplicateKeyError";
  }
}

export function isDuplicateKeyError(e: unknown): e is DuplicateKeyError {
  return e instanceof DuplicateKeyError;
}

/**
 * Thrown by both backends when the store cannot be reached now (connection refused or lost, no
 * server to select, the server shutting down or stepping down, the database closed or locked):
 * the operation may succeed later. The RPC layer answers it as `unavailable`; `cause` holds the
 * backend's own error.
 */
export class StoreUnavailableError extends Error {
  constructor(cause: unknown) {
    super(`the document store is unavailable: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = "StoreUnavailableError";
  }
}

/**
 * The collection with every method call made through `around`, given the method's name and the
 * call itself (errors mapped, statements timed, ...).
 */
export function aroundCollection<T extends Doc>(
  collection: Collection<T>,
  around: (method: string, call: () => Promise<unknown>) => Promise<unknown>,
): Collection<T> {
  const wrapped = { name: collection.name } as Collection<T>;
  for (const key of Object.keys(collection) as (keyof Collection<T>)[]) {
    const member = collection[key];
    if (typeof member !== "function") continue;
    const method = member as (...args: unknown[]) => Promise<unknown>;
    Object.assign(wrapped, {
      [key]: (...args: unknown[]) => around(String(key), () => method.apply(collection, args)),
    });
  }
  return wrapped;
}

/** The collection with every rejection passed through `map` (a backend's own errors in store terms). */
export function mapCollectionErrors<T extends Doc>(
  collection: Collection<T>,
  map: (error: unknown) => unknown,
): Collection<T> {
  return aroundCollection(collection, (_method, call) => call().catch((e: unknown) => Promise.reject(map(e))));
}

/**
 * Free-form user JSON (schemas, tool config, variables, outputs) is stored as JSON text so that
 * every key survives (`$ref`, `a.b`, `__proto__`), key order is kept and nothing in it can reach
 * a query as an operator.
 */
export function encodeJson(value: unknown): string {
  return JSON.stringify(value);
}

export function decodeJson<T = unknown>(text: string): T {
  return JSON.parse(text) as T;
}

export interface GroupInserter<T extends Doc> {
  /** Resolves once `doc` is stored; rejects with the error storing it alone would have given. */
  insert(doc: T): Promise<void>;
}

/**
 * Group commit for documents with fresh `_id`s (runs, outbox intents): an insert handed over while
 * a write is in flight waits for it and goes out with the others in one `insertMany`, so under load
 * the store sees one command per batch instead of one per request (each a SQLite transaction on
 * FerretDB and in the embedded store), and an idle store still sees one `insertOne`, at the end of
 * the event loop's turn the insert was made in. A batch is an unordered insert
 * that names its clashes: each caller gets the outcome its insert alone would have had (a
 * document clashing with a stored one is refused with DuplicateKeyError, in a batch or alone).
 * When a batch fails otherwise, its documents are inserted one by one; a clash on `_id` then means
 * the batch had already stored that document, which is why the ids must be new ones.
 */
export function createGroupInserter<T extends Doc>(collection: Collection<T>, maxBatch = 500): GroupInserter<T> {
  interface Pending {
    doc: T;
    resolve: () => void;
    reject: (e: unknown) => void;
  }
  let queue: Pending[] = [];
  let writing = false;
  const stored = async (id: string) => (await collection.findOne({ _id: id }, { projection: { _id: 1 } })) !== null;

  async function insertAlone(p: Pending, afterBatch: boolean): Promise<void> {
    try {
      await collection.insertOne(p.doc);
      p.resolve();
    } catch (e) {
      // After a failed batch, a clash on this `_id` means the batch stored it (FerretDB does not
      // name the clashing key, so the store is asked).
      if (afterBatch && isDuplicateKeyError(e) && (await stored(p.doc._id))) p.resolve();
      else p.reject(e);
    }
  }

  async function drain(): Promise<void> {
    writing = true;
    try {
      while (queue.length > 0) {
        const batch = queue.length <= maxBatch ? queue : queue.slice(0, maxBatch);
        queue = queue.length <= maxBatch ? [] : queue.slice(maxBatch);
        if (batch.length === 1) {
          await insertAlone(batch[0] as Pending, false);
          continue;
        }
        try {
          // Unordered: every document that clashes with nothing is stored, and the clashes are
          // named, so a document already stored before is refused as a lone insert refuses it,
          // whatever the batch it fell into.
          const clashed = new Set(await collection.insertUnordered(batch.map((p) => p.doc)));
          batch.forEach((p, i) => {
            if (clashed.has(i))
              p.reject(new DuplicateKeyError(`duplicate key: ${p.doc._id} clashes with a stored document`));
            else p.resolve();
          });
        } catch (e) {
          // One by one only to find a clash's document: with the store away each lone insert would
          // wait for it again, so the queue behind the batch would wait the outage times its size.
          if (e instanceof StoreUnavailableError) for (const p of batch) p.reject(e);
          else for (const p of batch) await insertAlone(p, true);
        }
      }
    } finally {
      writing = false;
    }
  }

  return {
    insert(doc) {
      return new Promise<void>((resolve, reject) => {
        queue.push({ doc, resolve, reject });
        if (writing) return;
        // The first insert waits for the end of this event-loop turn, so the others made in it go out
        // with it: a store that answers at once (the embedded one) took each run in a transaction of its own.
        writing = true;
        setImmediate(() => void drain());
      });
    },
  };
}

/**
 * The store, with `after()` awaited once each write through it is done (succeeded or not: a
 * failed write may have changed some documents). A write whose `after()` rejects rejects with
 * that error. The catalog moves its change counter this way (@kiln/kit/bus/generation).
 */
export function afterWrites(store: Store, after: () => Promise<void>): Store {
  const then =
    <A extends unknown[], R>(write: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      try {
        return await write(...args);
      } finally {
        await after();
      }
    };
  return {
    ensureIndexes: (collection, indexes) => store.ensureIndexes(collection, indexes),
    ping: () => store.ping(),
    close: () => store.close(),
    collection<T extends Doc>(name: string): Collection<T> {
      const c = store.collection<T>(name);
      return {
        name: c.name,
        insertOne: then((doc: T) => c.insertOne(doc)),
        insertMany: then((docs: T[]) => c.insertMany(docs)),
        insertUnordered: then((docs: T[]) => c.insertUnordered(docs)),
        findOne: (filter, options) => c.findOne(filter, options),
        find: (filter, options) => c.find(filter, options),
        countDocuments: (filter) => c.countDocuments(filter),
        updateOne: then((filter: Filter, update: Update, options?: { upsert?: boolean }) =>
          c.updateOne(filter, update, options),
        ),
        updateMany: then((filter: Filter, update: Update) => c.updateMany(filter, update)),
        findOneAndUpdate: then((filter: Filter, update: Update, options?: FindOneAndUpdateOptions) =>
          c.findOneAndUpdate(filter, update, options),
        ),
        replaceOne: then((filter: Filter, doc: T, options?: { upsert?: boolean }) =>
          c.replaceOne(filter, doc, options),
        ),
        deleteOne: then((filter: Filter) => c.deleteOne(filter)),
        deleteMany: then((filter: Filter) => c.deleteMany(filter)),
      };
    },
  };
}
