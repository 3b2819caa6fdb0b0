/**
 * `Store` on the official MongoDB driver, for MongoDB and FerretDB 1.24 (docs/architecture.md "Store backends"). One
 * MongoClient per store; the driver connects on the first operation, so `collection()` is
 * synchronous and creating a store never fails. Inputs go through the same portability guards as
 * the in-memory store, so both refuse the same things.
 *
 * FerretDB 1.24 runs every update (update, findAndModify) as a read followed by an unconditional
 * write-back by `_id` (FerretDB issue #2168): concurrent updates of one document are lost and two
 * concurrent claims can both win. So each store runs its updates, replaces and deletes one at a
 * time per collection. That makes them atomic within one process, NOT across processes sharing a
 * FerretDB; on MongoDB they are atomic anyway.
 */
import {
  type Document,
  type Collection as DriverCollection,
  MongoClient,
  type MongoClientOptions,
  MongoNetworkError,
  MongoServerError,
  MongoServerSelectionError,
  type UpdateFilter,
} from "mongodb";
import {
  assertPortableDocument,
  assertPortableFilter,
  assertPortableIndex,
  assertPortableProjection,
  assertPortableSort,
  assertPortableUpdate,
  upsertIdOf,
} from "./assert-portable.js";
import { clashedPositions, run } from "./mongo-errors.js";
import {
  type Collection,
  type Doc,
  type FindOptions,
  type IndexSpec,
  type Store,
  StoreUnavailableError,
  type UpdateResult,
} from "./store.js";

export { isMongoUnavailable } from "./mongo-errors.js";

export interface MongoStoreOptions {
  /** e.g. `mongodb://127.0.0.1:27017/?directConnection=true` (127.0.0.1: `localhost` may resolve to ::1). */
  url: string;
  database: string;
  appName?: string;
  /** How long an operation waits for a reachable server; default 5 000 (the driver's is 30 000). */
  serverSelectionTimeoutMs?: number;
}

const DEFAULT_SERVER_SELECTION_TIMEOUT_MS = 5_000;
/** How long a client may fail every server selection before it is replaced by a new one. */
const RECONNECT_AFTER_MS = 10_000;

const selectionFailed = (e: unknown): boolean =>
  e instanceof MongoServerSelectionError ||
  (e instanceof StoreUnavailableError && e.cause instanceof MongoServerSelectionError);

/** What the driver sees: our documents always carry a string `_id`. */
type StoredDoc = Document & { _id: string };
type Serializer = <R>(op: () => Promise<R>) => Promise<R>;

export function createMongoStore(options: MongoStoreOptions): Store {
  // The driver's 30 s would hold every operation that long while the server is away: calls pile up
  // behind the ones waiting (per-collection write order, group inserts, the relays) and the caller
  // has long given up; failing sooner answers 503 and lets the work resume once the server is back.
  const clientOptions: MongoClientOptions = {
    serverSelectionTimeoutMS: options.serverSelectionTimeoutMs ?? DEFAULT_SERVER_SELECTION_TIMEOUT_MS,
  };
  if (options.appName !== undefined) clientOptions.appName = options.appName;
  let client = new MongoClient(options.url, clientOptions);
  let db = client.db(options.database);
  // A client whose server selection keeps failing long after the server is back (its monitor
  // wedged after the server's restart: seen in one process of five, for minutes, while a fresh
  // client connected at once) is replaced: after RECONNECT_AFTER_MS of nothing but selection
  // failures, the next operation gets a new client and the old one is closed.
  let failingSince: number | undefined;
  const guard = async <R>(op: () => Promise<R>): Promise<R> => {
    try {
      const result = await op();
      failingSince = undefined;
      return result;
    } catch (e) {
      if (selectionFailed(e)) {
        const at = Date.now();
        failingSince ??= at;
        if (at - failingSince >= RECONNECT_AFTER_MS) {
          failingSince = at;
          const old = client;
          client = new MongoClient(options.url, clientOptions);
          db = client.db(options.database);
          old.close(true).catch(() => undefined);
        }
      }
      throw e;
    }
  };
  const serializers = new Map<string, Serializer>();
  const serializerFor = (name: string): Serializer => {
    let serializer = serializers.get(name);
    if (!serializer) {
      serializer = createSerializer();
      serializers.set(name, serializer);
    }
    return serializer;
  };
  return {
    collection: <T extends Doc>(name: string) =>
      createMongoCollection<T>(
        () => db.collection<StoredDoc>(name),
        name,
        { database: options.database, guard },
        serializerFor(name),
      ),
    async ensureIndexes(collection: string, indexes: IndexSpec[]) {
      for (const index of indexes) assertPortableIndex(index);
      if (indexes.length === 0) return;
      // createIndexes is a no-op for indexes that already exist with the same keys and options.
      const descriptions = indexes.map((i) => ({
        key: i.keys,
        ...(i.unique && { unique: true }),
        ...(i.name && { name: i.name }),
        ...(i.expireAfterSeconds !== undefined && { expireAfterSeconds: i.expireAfterSeconds }),
      }));
      // Replicas starting together create the same indexes at once. FerretDB 1.24 may then drop the
      // connection of one (a panic in its createIndexes), and again on every later createIndexes of
      // that collection: so only the indexes not listed yet are created, and a dropped connection
      // is followed by another look at the list.
      const coll = db.collection(collection);
      const signature = (d: { key: Document; unique?: boolean }) => JSON.stringify([d.key, Boolean(d.unique)]);
      for (let attempt = 1; ; attempt++) {
        try {
          const existing = await run(`${options.database}.${collection}`, () =>
            coll
              .listIndexes()
              .toArray()
              .catch((e: unknown) => {
                // A collection that does not exist yet has no indexes.
                if (e instanceof MongoServerError && e.code === 26) return [];
                throw e;
              }),
          );
          const have = new Set(existing.map((i) => signature({ key: i.key, unique: i.unique })));
          const missing = descriptions.filter((d) => !have.has(signature(d)));
          if (missing.length > 0) await createIndexes(coll, `${options.database}.${collection}`, missing);
          return;
        } catch (e) {
          if (attempt >= 3 || !(e instanceof StoreUnavailableError && e.cause instanceof MongoNetworkError)) throw e;
          await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
        }
      }
    },
    async ping() {
      await guard(() => db.command({ ping: 1 }));
    },
    async close() {
      await client.close();
    },
  };
}

function createMongoCollection<T extends Doc>(
  coll: () => DriverCollection<StoredDoc>,
  name: string,
  { database, guard }: { database: string; guard: <R>(op: () => Promise<R>) => Promise<R> },
  serialize: Serializer,
): Collection<T> {
  const namespace = `${database}.${name}`;
  const exec = <R>(op: () => Promise<R>) => guard(() => run(namespace, op));
  /** For the read-modify-write operations FerretDB does not make atomic (see the top of the file). */
  const write = <R>(op: () => Promise<R>) => serialize(() => guard(() => run(namespace, op)));
  const findOptions = (options: FindOptions) => {
    if (options.sort) assertPortableSort(options.sort);
    if (options.projection) assertPortableProjection(options.projection);
    return options;
  };
  return {
    name,
    async insertOne(doc) {
      assertPortableDocument(doc);
      // Inserts are atomic on FerretDB too: its SQL backend enforces `_id` and unique indexes.
      await exec(() => coll().insertOne(doc));
    },
    async insertMany(docs) {
      for (const doc of docs) assertPortableDocument(doc);
      if (docs.length === 0) return;
      await exec(() => coll().insertMany(docs, { ordered: true }));
    },
    async insertUnordered(docs) {
      for (const doc of docs) assertPortableDocument(doc);
      if (docs.length === 0) return [];
      return exec(async () => {
        try {
          await coll().insertMany(docs, { ordered: false });
          return [];
        } catch (e) {
          const clashed = clashedPositions(e);
          if (clashed) return clashed;
          throw e;
        }
      });
    },
    async findOne(filter, options = {}) {
      assertPortableFilter(filter);
      return (await exec(() => coll().findOne(filter, findOptions(options)))) as T | null;
    },
    async find(filter, options = {}) {
      assertPortableFilter(filter);
      return (await exec(() => coll().find(filter, findOptions(options)).toArray())) as T[];
    },
    async countDocuments(filter) {
      assertPortableFilter(filter);
      return await exec(() => coll().countDocuments(filter));
    },
    async updateOne(filter, update, options = {}) {
      assertPortableFilter(filter);
      assertPortableUpdate(update);
      // Refuses an upsert that would make the server invent an ObjectId _id.
      if (options.upsert) upsertIdOf(filter, update);
      const upsert = options.upsert ?? false;
      return toUpdateResult(await write(() => coll().updateOne(filter, update as UpdateFilter<StoredDoc>, { upsert })));
    },
    async updateMany(filter, update) {
      assertPortableFilter(filter);
      assertPortableUpdate(update);
      return toUpdateResult(await write(() => coll().updateMany(filter, update as UpdateFilter<StoredDoc>)));
    },
    async findOneAndUpdate(filter, update, options = {}) {
      assertPortableFilter(filter);
      assertPortableUpdate(update);
      if (options.sort) assertPortableSort(options.sort);
      if (options.upsert) upsertIdOf(filter, update);
      // The driver's default is "before"; the interface's is "after". Driver 7 returns the document itself.
      const driverOptions = {
        returnDocument: options.returnDocument ?? "after",
        upsert: options.upsert ?? false,
        ...(options.sort && { sort: options.sort }),
      } as const;
      const doc = await write(() => coll().findOneAndUpdate(filter, update as UpdateFilter<StoredDoc>, driverOptions));
      return doc as T | null;
    },
    async replaceOne(filter, doc, options = {}) {
      assertPortableFilter(filter);
      assertPortableDocument(doc);
      const upsert = options.upsert ?? false;
      return toUpdateResult(await write(() => coll().replaceOne(filter, doc, { upsert })));
    },
    async deleteOne(filter) {
      assertPortableFilter(filter);
      const { deletedCount } = await write(() => coll().deleteOne(filter));
      return { deletedCount };
    },
    async deleteMany(filter) {
      assertPortableFilter(filter);
      const { deletedCount } = await write(() => coll().deleteMany(filter));
      return { deletedCount };
    },
  };
}

type IndexDescription = { key: Record<string, 1 | -1>; unique?: boolean; name?: string; expireAfterSeconds?: number };

/** FerretDB 1.24's answer to an index option it does not have (`expireAfterSeconds`). */
const NOT_IMPLEMENTED = 238;

/**
 * Creates the indexes; a server without TTL indexes (FerretDB 1.24 answers NotImplemented) gets
 * them without `expireAfterSeconds`: their owners sweep expired documents themselves (IndexSpec).
 */
async function createIndexes(coll: DriverCollection<Document>, namespace: string, missing: IndexDescription[]) {
  try {
    await run(namespace, () => coll.createIndexes(missing));
  } catch (e) {
    const withTtl = missing.some((d) => d.expireAfterSeconds !== undefined);
    if (!withTtl || !(e instanceof MongoServerError) || e.code !== NOT_IMPLEMENTED) throw e;
    const plain = missing.map(({ expireAfterSeconds: _, ...d }) => d);
    await run(namespace, () => coll.createIndexes(plain));
  }
}

/** Runs operations one after another in call order; a failure does not stop the ones queued after it. */
function createSerializer(): Serializer {
  let tail: Promise<unknown> = Promise.resolve();
  return <R>(op: () => Promise<R>) => {
    const result = tail.then(op);
    tail = result.catch(() => undefined);
    return result;
  };
}

function toUpdateResult(result: { matchedCount: number; modifiedCount: number; upsertedId: unknown }): UpdateResult {
  const { matchedCount, modifiedCount, upsertedId } = result;
  return upsertedId == null
    ? { matchedCount, modifiedCount }
    : { matchedCount, modifiedCount, upsertedId: String(upsertedId) };
}
