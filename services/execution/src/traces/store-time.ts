/**
 * The trace collections with the time spent waiting on each statement reported: when the store is
 * another process (FerretDB, MongoDB), that time is the store's, not this process's, and the
 * ingestion bound (ingest-limiter.ts) leaves it out of what ingestion holds of the process.
 */
import { aroundCollection, type Collection, type Doc } from "@kiln/kit/store";
import type { TraceCollections } from "./trace-store.js";

/** Told how long one statement took, and which (`<collection>.<method>`). */
export type Waited = (ms: number, statement: string) => void;

function timed<T extends Doc>(collection: Collection<T>, waited: Waited): Collection<T> {
  return aroundCollection(collection, async (method, call) => {
    const started = performance.now();
    try {
      return await call();
    } finally {
      waited(performance.now() - started, `${collection.name}.${method}`);
    }
  });
}

export const timedCollections = (c: TraceCollections, waited: Waited): TraceCollections => ({
  spans: timed(c.spans, waited),
  traces: timed(c.traces, waited),
  sessions: timed(c.sessions, waited),
  pendingLogs: timed(c.pendingLogs, waited),
});
