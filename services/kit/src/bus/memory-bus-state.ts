/** The in-process bus's state: streams, their stored messages, consumers and subscriptions. */
import type { ConsumeOptions, MessageHandler } from "./bus.js";
import type { ResolvedConsumerSpec, ResolvedStreamSpec } from "./resolve-spec.js";

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
