/**
 * The message bus interface: a subset of NATS JetStream that the NATS backend maps one to one and
 * the in-process backend reproduces (docs/architecture.md "Bus"). Delivery is at least once; consumers must be
 * idempotent. Publishing with a `msgId` is de-duplicated within the stream's duplicate window.
 */

export type Retention = "limits" | "interest" | "workqueue";

export interface StreamSpec {
  name: string;
  subjects: string[];
  retention: Retention;
  /** De-duplication window for `msgId`; default 2 minutes. */
  duplicateWindowMs?: number;
  /** Messages older than this are dropped; default: kept. */
  maxAgeMs?: number;
  /**
   * Most bytes of messages kept: past it the oldest are dropped (JetStream's max_bytes with
   * discard old). Default: unbounded on NATS; the in-process bus bounds every stream (memory-bus.ts).
   */
  maxBytes?: number;
}

export interface ConsumerSpec {
  stream: string;
  /** Durable name: consumers with the same name share the work (each message goes to one of them). */
  durable: string;
  /** Subject filter, wildcards `*` and `>` as in NATS. Default: all the stream's subjects. */
  filterSubject?: string;
  /** Redelivery after this long without an ack; default 30 s. */
  ackWaitMs?: number;
  /** Deliveries before a message is given up; default unlimited (-1). */
  maxDeliver?: number;
  /** Unacknowledged messages one consumer may hold; default 1000. */
  maxAckPending?: number;
}

export interface PublishOptions {
  /** De-duplication id, e.g. the run id. */
  msgId?: string;
  headers?: Record<string, string>;
}

export interface PublishAck {
  stream: string;
  seq: number;
  /** True when `msgId` was already seen within the duplicate window: nothing new was stored. */
  duplicate: boolean;
}

/** What one delivery of a message carries. */
export interface Delivery {
  readonly subject: string;
  readonly data: Uint8Array;
  readonly headers: Record<string, string>;
  /** 1 on first delivery. */
  readonly deliveryCount: number;
  readonly redelivered: boolean;
  /** Stream sequence number. */
  readonly seq: number;
}

export interface BusMessage extends Delivery {
  /** The data as JSON text. */
  json<T = unknown>(): T;
  string(): string;
  /** Done: the message will not be delivered again. Resolves when the bus confirmed it. */
  ack(): Promise<void>;
  /** Deliver again, after `delayMs` when given. */
  nak(delayMs?: number): void;
  /** Never deliver again (poison message). */
  term(): void;
  /** Still working on it: restarts the ack-wait timer. */
  working(): void;
}

/**
 * Called once per delivery. Returning acks the message unless the handler already settled it with
 * ack, nak or term; throwing naks it with a short delay so it is delivered again.
 */
export type MessageHandler = (msg: BusMessage) => Promise<void>;

export interface ConsumeOptions {
  /** Messages handled at the same time by this subscription; default 1. */
  concurrency?: number;
  /** Delay of the automatic nak after a handler throws; default 1000 ms. */
  retryDelayMs?: number;
  /** Called when a handler throws, before the message is nak'ed. */
  onError?: (error: unknown, msg: BusMessage) => void;
}

/** What `listen` hands each message: its subject (as published) and its data. */
export type Listener = (subject: string, data: Uint8Array) => void;

export interface Subscription {
  /** Stops taking messages, waits for the handlers in flight to finish, settles nothing else. */
  stop(): Promise<void>;
}

export interface StreamInfo {
  name: string;
  /** Messages currently stored. */
  messages: number;
  /** Sequence of the last message the stream stored (0 if none); it never goes back, even when messages expire. */
  lastSeq: number;
}

export interface Bus {
  /** Idempotent: creates the stream, or updates it to this spec. */
  ensureStream(spec: StreamSpec): Promise<void>;
  /** Idempotent: creates the durable consumer if it does not exist. */
  ensureConsumer(spec: ConsumerSpec): Promise<void>;
  /** Publishes to the stream that owns `subject`; rejects when the bus cannot store it. */
  publish(subject: string, payload: string | Uint8Array, options?: PublishOptions): Promise<PublishAck>;
  /** Starts a pull loop on a durable consumer (created if missing). */
  consume(spec: ConsumerSpec, handler: MessageHandler, options?: ConsumeOptions): Subscription;
  /**
   * Every listener, in every process, gets each message published from now on whose subject
   * matches `subject` (wildcards as for filters): at most once per publish (a publish repeated
   * with the same `msgId` may be heard again), nothing stored, acknowledged or redelivered. For hints a listener may miss (the MCP endpoint's
   * list-changed notifications), never for work.
   */
  listen(subject: string, listener: Listener): Subscription;
  streamInfo(name: string): Promise<StreamInfo>;
  /** Resolves when the bus answers; used by readiness checks. */
  ping(): Promise<void>;
  /** Stops every subscription (waiting for handlers in flight) and disconnects. */
  close(): Promise<void>;
}

/**
 * Thrown by a backend when the bus cannot be reached now (disconnected, closed, draining, no
 * answer in time, JetStream not answering while the server restarts): a retry later may succeed.
 * The RPC layer answers it as `unavailable`; `cause` holds the client's own error.
 */
export class BusUnavailableError extends Error {
  constructor(cause: unknown) {
    super(`the message bus is unavailable: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = "BusUnavailableError";
  }
}
