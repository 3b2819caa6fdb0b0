/**
 * The trace collections with the time spent waiting on each statement reported: when the store is
 * another process (FerretDB, MongoDB), that time is the store's, not this process's, and the
 * ingestion bound (ingest-limiter.ts) leaves it out of what ingestion holds of the process.
 */
import type { Collection, Doc } from "@kiln/kit/store";
import type { TraceCollections } from "./trace-store.js";

function timed<T extends Doc>(collection: Collection<T>, waited: (ms: number) => void): Collection<T> {
  const out = { name: collection.name } as Collection<T>;
  for (const key of Object.keys(collection) as (keyof Collection<T>)[]) {
    const member = collection[key];
    if (typeof member !== "function") continue;
    const method = member as (...args: unknown[]) => Promise<unknown>;
    Object.assign(out, {
      [key]: async (...args: unknown[]) => {
        const started = performance.now();
        try {
          return await method.apply(collection, args);
        } finally {
          waited(performance.now() - started);
        }
      },
    });
  }
  return out;
}

export const timedCollections = (c: TraceCollections, waited: (ms: number) => void): TraceCollections => ({
  spans: timed(c.spans, waited),
  traces: timed(c.traces, waited),
  sessions: timed(c.sessions, waited),
});
