/** The in-process bus's state: streams, their stored messages, consumers and subscriptions. */
import type { ConsumeOptions, MessageHandler } from "./bus.js";
import type { ResolvedConsumerSpec, ResolvedStreamSpec } from "./resolve-spec.js";

/**
 * The bytes each stream keeps when its spec names none: the process's heap is bounded (the image
 * runs with a 128 MB old space) and streams keep days of events (event-outbox.ts: seven).
 */
export const DEFAULT_STREAM_MAX_BYTES = 8 * 1024 * 1024;

export interface MemoryBusOptions {
  /** Bytes kept by a stream whose spec sets no `maxBytes`; default DEFAULT_STREAM_MAX_BYTES. */
  streamMaxBytes?: number;
}

export interface StoredMessage {
  seq: number;
  subject: string;
  data: Uint8Array;
  headers: Record<string, string>;
  storedAtMs: number;
}

export interface MemoryStream {
  spec: ResolvedStreamSpec;
  /** Insertion order is sequence order, which the age and window purges rely on. */
  messages: Map<number, StoredMessage>;
  /** Bytes of the stored messages (storedBytes), bounded by `maxBytes`. */
  bytes: number;
  maxBytes: number;
  lastSeq: number;
  msgIds: Map<string, { seq: number; atMs: number }>;
  consumers: Map<string, MemoryConsumer>;
  expiryTimer?: NodeJS.Timeout;
}

/** A delivered, unacknowledged message: out with a handler, waiting out a nak delay, or queued. */
export interface Pending {
  seq: number;
  deliveryCount: number;
  state: "delivered" | "delayed" | "queued";
  timer?: NodeJS.Timeout;
}

export interface MemoryConsumer {
  stream: MemoryStream;
  spec: ResolvedConsumerSpec;
  /** Next stream sequence this consumer has never delivered. */
  cursor: number;
  /** Counts toward maxAckPending, like the server's pending list, including queued redeliveries. */
  pending: Map<number, Pending>;
  redeliver: number[];
  subscriptions: MemorySubscription[];
  nextSubscription: number;
  dispatchScheduled: boolean;
}

export interface MemorySubscription {
  handler: MessageHandler;
  options: ConsumeOptions;
  concurrency: number;
  inFlight: Set<Promise<void>>;
  stopped: boolean;
}

/** A new stream of `spec`, or `existing` with the spec (and its bytes bound) changed. */
export function newStream(spec: ResolvedStreamSpec, options: MemoryBusOptions, existing?: MemoryStream): MemoryStream {
  const maxBytes = spec.maxBytes ?? options.streamMaxBytes ?? DEFAULT_STREAM_MAX_BYTES;
  if (existing) return { ...existing, spec, maxBytes };
  return { spec, messages: new Map(), bytes: 0, maxBytes, lastSeq: 0, msgIds: new Map(), consumers: new Map() };
}

/** What a stored message counts toward its stream's byte bound: its data, subject and headers. */
export function storedBytes(m: Pick<StoredMessage, "subject" | "data" | "headers">): number {
  let bytes = m.data.byteLength + m.subject.length;
  for (const [k, v] of Object.entries(m.headers)) bytes += k.length + v.length;
  return bytes;
}

/** A new durable consumer; deliver policy "all": it starts at the oldest message still stored. */
export function newConsumer(stream: MemoryStream, spec: ResolvedConsumerSpec): MemoryConsumer {
  const first = stream.messages.keys().next();
  return {
    stream,
    spec,
    cursor: first.done ? stream.lastSeq + 1 : first.value,
    pending: new Map(),
    redeliver: [],
    subscriptions: [],
    nextSubscription: 0,
    dispatchScheduled: false,
  };
}
