/**
 * The response cache's entries (docs/cache.md "Where entries live"): one collection of the
 * execution service's store, so the embedded store in one process and MongoDB (FerretDB) shared by
 * every replica in the distributed mode. An entry expires at `expiresAt`: MongoDB's TTL index
 * deletes it, a sweep does where the store cannot (FerretDB 1.24, the embedded stores), and a
 * read never answers one past it. A cache that fails is a miss, never a failed run.
 */
import { LIMITS } from "@kiln/kit/limits";
import type { Logger } from "@kiln/kit/logger";
import type { Collection, Store } from "@kiln/kit/store";
import { deleteInBatches, type Sweeper, startSweeper } from "@kiln/kit/sweeper";
import type { TokenUsage } from "@kiln/models/provider";
import type { StepOutput } from "../runs/bindings.js";

const COLLECTION = "response_cache";
const SWEEP_BATCH = 500;

export interface CachedResponseDoc {
  /** The key (response-key.ts), which the organization is part of. */
  _id: string;
  organizationId: string;
  /** StepOutput as JSON text: user data keeps no document keys. */
  outputJson: string;
  provider: string;
  model: string;
  /** The tokens and cost of the run that made the answer: what a hit saves. */
  usage: TokenUsage;
  costUsd: number | null;
  sourceRunId: string;
  createdAt: Date;
  expiresAt: Date;
}

/** An answer found in the cache. */
export interface CachedAnswer {
  output: StepOutput;
  provider: string;
  model: string;
  usage: TokenUsage;
  costUsd: number | null;
  sourceRunId: string;
}

export interface ResponseCache {
  /** The organization's answer under `key` made less than `maxAgeSeconds` ago and not expired; null otherwise. */
  lookup(organizationId: string, key: string, maxAgeSeconds: number): Promise<CachedAnswer | null>;
  /** Keeps the answer for `ttlSeconds` (not when larger than LIMITS.cacheEntryBytes); never rejects. */
  keep(organizationId: string, key: string, answer: CachedAnswer, ttlSeconds: number): Promise<void>;
}

export function createResponseCache(store: Store, logger: Logger, now: () => Date = () => new Date()): ResponseCache {
  const entries: Collection<CachedResponseDoc> = store.collection(COLLECTION);
  return {
    async lookup(organizationId, key, maxAgeSeconds) {
      try {
        // By _id alone: FerretDB answers any other read by scanning the collection.
        const doc = await entries.findOne({ _id: key });
        const at = now().getTime();
        if (!doc || doc.organizationId !== organizationId || doc.expiresAt.getTime() <= at) return null;
        if (doc.createdAt.getTime() + maxAgeSeconds * 1000 <= at) return null;
        return {
          output: JSON.parse(doc.outputJson) as StepOutput,
          provider: doc.provider,
          model: doc.model,
          usage: doc.usage,
          costUsd: doc.costUsd,
          sourceRunId: doc.sourceRunId,
        };
      } catch (err) {
        logger.warn({ err }, "the response cache could not be read: the run calls the model");
        return null;
      }
    },

    async keep(organizationId, key, answer, ttlSeconds) {
      const outputJson = JSON.stringify(answer.output);
      if (Buffer.byteLength(outputJson) > LIMITS.cacheEntryBytes) return;
      const createdAt = now();
      const { output: _, ...rest } = answer;
      const doc = {
        _id: key,
        organizationId,
        outputJson,
        ...rest,
        createdAt,
        expiresAt: new Date(createdAt.getTime() + ttlSeconds * 1000),
      };
      try {
        await entries.replaceOne({ _id: key }, doc, { upsert: true });
      } catch (err) {
        logger.warn({ err }, "an answer could not be kept in the response cache");
      }
    },
  };
}

/** The expiry index (MongoDB's TTL) and the sweep of expired entries, hourly by default. */
export async function startResponseCacheSweeper(store: Store, logger: Logger, intervalMs?: number): Promise<Sweeper> {
  await store.ensureIndexes(COLLECTION, [{ keys: { expiresAt: 1 }, expireAfterSeconds: 0 }]);
  const entries = store.collection<CachedResponseDoc>(COLLECTION);
  return startSweeper({
    logger,
    what: "response cache entries",
    intervalMs,
    sweep: () => deleteInBatches(entries, { expiresAt: { $lte: new Date() } }, SWEEP_BATCH),
  });
}
