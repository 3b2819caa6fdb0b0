/**
 * The defaults of bus.ts, applied in one place so both backends configure streams and consumers
 * identically.
 */
import type { ConsumerSpec, StreamSpec } from "./bus.js";

const DEFAULT_DUPLICATE_WINDOW_MS = 2 * 60_000;
const DEFAULT_ACK_WAIT_MS = 30_000;
const DEFAULT_MAX_ACK_PENDING = 1000;

export type ResolvedStreamSpec = Required<Omit<StreamSpec, "maxAgeMs" | "maxBytes">> & {
  maxAgeMs: number | undefined;
  maxBytes: number | undefined;
};
export type ResolvedConsumerSpec = Required<Omit<ConsumerSpec, "filterSubject">> & {
  filterSubject: string | undefined;
};

export function resolveStreamSpec(spec: StreamSpec): ResolvedStreamSpec {
  const maxAgeMs = spec.maxAgeMs && spec.maxAgeMs > 0 ? spec.maxAgeMs : undefined;
  // JetStream refuses a duplicate window longer than max age, so the default shrinks to fit.
  const fallbackWindowMs =
    maxAgeMs === undefined ? DEFAULT_DUPLICATE_WINDOW_MS : Math.min(DEFAULT_DUPLICATE_WINDOW_MS, maxAgeMs);
  return {
    name: spec.name,
    subjects: [...spec.subjects],
    retention: spec.retention,
    duplicateWindowMs: spec.duplicateWindowMs ?? fallbackWindowMs,
    maxAgeMs,
    maxBytes: spec.maxBytes && spec.maxBytes > 0 ? spec.maxBytes : undefined,
  };
}

export function resolveConsumerSpec(spec: ConsumerSpec): ResolvedConsumerSpec {
  return {
    stream: spec.stream,
    durable: spec.durable,
    filterSubject: spec.filterSubject || undefined,
    ackWaitMs: spec.ackWaitMs ?? DEFAULT_ACK_WAIT_MS,
    maxDeliver: spec.maxDeliver ?? -1,
    maxAckPending: spec.maxAckPending ?? DEFAULT_MAX_ACK_PENDING,
  };
}
