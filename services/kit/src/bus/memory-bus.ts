/**
 * The bus in process, for tests and the embedded mode. It reproduces what Kiln relies on from
 * JetStream (tech-notes §2.2), checked by the same contract suite as the NATS backend: streams own
 * subjects, msgId de-duplication, limits/interest/workqueue retention, durable pull consumers with
 * ackWait, nak delays, term, working, maxDeliver and maxAckPending. Error messages follow the
 * server's wording. Nothing survives the process.
 */
import type {
  Bus,
  ConsumeOptions,
  ConsumerSpec,
  MessageHandler,
  PublishAck,
  PublishOptions,
  StreamInfo,
  StreamSpec,
  Subscription,
} from "./bus.js";
import {
  type ResolvedConsumerSpec,
  type ResolvedStreamSpec,
  resolveConsumerSpec,
  resolveStreamSpec,
} from "./resolve-spec.js";
import { runHandler, type SettleableMessage } from "./run-handler.js";

const CONSUME_RETRY_MS = 500;

interface StoredMessage {
  seq: number;
  subject: string;
  data: Uint8Array;
  headers: Record<string, string>;
  storedAtMs: number;
}

interface MemoryStream {
  spec: ResolvedStreamSpec;
  /** Insertion order is sequence order, which the age and window purges rely on. */
  messages: Map<number, StoredMessage>;
  lastSeq: number;
  msgIds: Map<string, { seq: number; atMs: number }>;
  consumers: Map<string, MemoryConsumer>;
  expiryTimer?: NodeJS.Timeout;
}

/** A delivered, unacknowledged message: out with a handler, waiting out a nak delay, or queued. */
interface Pending {
  seq: number;
  deliveryCount: number;
  state: "delivered" | "delayed" | "queued";
  timer?: NodeJS.Timeout;
}

interface MemoryConsumer {
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

interface MemorySubscription {
  handler: MessageHandler;
  options: ConsumeOptions;
  concurrency: number;
  inFlight: Set<Promise<void>>;
  stopped: boolean;
}

export function createMemoryBus(): Bus {
  const streams = new Map<string, MemoryStream>();
  const subscriptions = new Set<Subscription>();
  let closed = false;

  function assertOpen(): void {
    if (closed) throw new Error("bus closed");
  }

  function getStream(name: string): MemoryStream {
    const stream = streams.get(name);
    if (!stream) throw new Error(`stream not found: ${name}`);
    return stream;
  }

  async function ensureStream(spec: StreamSpec): Promise<void> {
    assertOpen();
    const s = resolveStreamSpec(spec);
    if (s.maxAgeMs !== undefined && s.duplicateWindowMs > s.maxAgeMs) {
      throw new Error("duplicates window can not be larger then max age");
    }
    for (const other of streams.values()) {
      if (other.spec.name === s.name) continue;
      if (s.subjects.some((a) => other.spec.subjects.some((b) => subjectsOverlap(a, b)))) {
        throw new Error("subjects overlap with an existing stream");
      }
    }
    const existing = streams.get(s.name);
    if (!existing) {
      streams.set(s.name, { spec: s, messages: new Map(), lastSeq: 0, msgIds: new Map(), consumers: new Map() });
      return;
    }
    if (existing.spec.retention !== s.retention) {
      throw new Error("stream configuration update can not change retention policy");
    }
    existing.spec = s;
    scheduleExpiry(existing);
  }

  async function ensureConsumer(spec: ConsumerSpec): Promise<void> {
    assertOpen();
    upsertConsumer(resolveConsumerSpec(spec));
  }

  function upsertConsumer(c: ResolvedConsumerSpec): MemoryConsumer {
    const stream = getStream(c.stream);
    const filter = c.filterSubject;
    if (filter && !stream.spec.subjects.some((s) => subjectsOverlap(s, filter))) {
      throw new Error("consumer filter subject is not a valid subset of the interest subjects");
    }
    if (stream.spec.retention === "workqueue") {
      for (const other of stream.consumers.values()) {
        if (other.spec.durable === c.durable) continue;
        const otherFilter = other.spec.filterSubject;
        if (!filter || !otherFilter) throw new Error("multiple non-filtered consumers not allowed on workqueue stream");
        if (subjectsOverlap(filter, otherFilter)) throw new Error("filtered consumer not unique on workqueue stream");
      }
    }
    const existing = stream.consumers.get(c.durable);
    if (existing) {
      // Like nats-server 2.9, adding an existing durable updates its settings.
      existing.spec = c;
      scheduleDispatch(existing);
      return existing;
    }
    // Deliver policy "all": start at the oldest message still stored.
    const first = stream.messages.keys().next();
    const consumer: MemoryConsumer = {
      stream,
      spec: c,
      cursor: first.done ? stream.lastSeq + 1 : first.value,
      pending: new Map(),
      redeliver: [],
      subscriptions: [],
      nextSubscription: 0,
      dispatchScheduled: false,
    };
    stream.consumers.set(c.durable, consumer);
    return consumer;
  }

  async function publish(
    subject: string,
    payload: string | Uint8Array,
    options: PublishOptions = {},
  ): Promise<PublishAck> {
    assertOpen();
    const stream = [...streams.values()].find((s) => s.spec.subjects.some((p) => subjectMatches(p, subject)));
    if (!stream) throw new Error(`no stream owns subject ${subject} (no responders)`);
    const now = Date.now();
    purgeMsgIds(stream, now);
    // A duplicate answers with the original sequence and stores nothing.
    const seen = options.msgId === undefined ? undefined : stream.msgIds.get(options.msgId);
    if (seen) return { stream: stream.spec.name, seq: seen.seq, duplicate: true };

    const seq = ++stream.lastSeq;
    if (options.msgId !== undefined) stream.msgIds.set(options.msgId, { seq, atMs: now });
    const consumers = [...stream.consumers.values()];
    // An interest stream keeps only what some consumer will want; the sequence is used all the same.
    if (stream.spec.retention === "interest" && !consumers.some((c) => filterMatches(c, subject))) {
      return { stream: stream.spec.name, seq, duplicate: false };
    }
    const data = typeof payload === "string" ? new TextEncoder().encode(payload) : payload.slice();
    stream.messages.set(seq, { seq, subject, data, headers: { ...options.headers }, storedAtMs: now });
    scheduleExpiry(stream);
    for (const c of consumers) scheduleDispatch(c);
    return { stream: stream.spec.name, seq, duplicate: false };
  }

  function purgeMsgIds(stream: MemoryStream, now: number): void {
    for (const [id, { atMs }] of stream.msgIds) {
      if (atMs + stream.spec.duplicateWindowMs > now) break;
      stream.msgIds.delete(id);
    }
  }

  function purgeExpired(stream: MemoryStream): void {
    const maxAgeMs = stream.spec.maxAgeMs;
    if (maxAgeMs === undefined) return;
    const now = Date.now();
    for (const [seq, m] of stream.messages) {
      if (m.storedAtMs + maxAgeMs > now) break;
      stream.messages.delete(seq);
    }
  }

  /** One timer per stream, set for the oldest message's expiry. */
  function scheduleExpiry(stream: MemoryStream): void {
    clearTimeout(stream.expiryTimer);
    stream.expiryTimer = undefined;
    const maxAgeMs = stream.spec.maxAgeMs;
    const oldest = stream.messages.values().next();
    if (maxAgeMs === undefined || oldest.done || closed) return;
    const dueInMs = Math.max(0, oldest.value.storedAtMs + maxAgeMs - Date.now());
    stream.expiryTimer = setTimeout(() => {
      purgeExpired(stream);
      scheduleExpiry(stream);
    }, dueInMs).unref();
  }

  /** After an ack or term: drop the message if the retention policy says nobody needs it now. */
  function releaseMessage(stream: MemoryStream, seq: number): void {
    const m = stream.messages.get(seq);
    if (!m || stream.spec.retention === "limits") return;
    if (stream.spec.retention === "interest") {
      for (const c of stream.consumers.values()) {
        if (filterMatches(c, m.subject) && (seq >= c.cursor || c.pending.has(seq))) return;
      }
    }
    stream.messages.delete(seq);
  }

  function scheduleDispatch(c: MemoryConsumer): void {
    if (c.dispatchScheduled || closed) return;
    c.dispatchScheduled = true;
    // Dispatching from a microtask keeps handlers and settle calls from re-entering the loop.
    queueMicrotask(() => {
      c.dispatchScheduled = false;
      dispatch(c);
    });
  }

  function dispatch(c: MemoryConsumer): void {
    for (;;) {
      const sub = freeSubscription(c);
      if (!sub) return;
      const next = takeNext(c);
      if (!next) return;
      deliver(c, sub, next.message, next.pending);
    }
  }

  /** Round robin over the subscriptions that have a free slot. */
  function freeSubscription(c: MemoryConsumer): MemorySubscription | undefined {
    const subs = c.subscriptions;
    for (let i = 0; i < subs.length; i++) {
      const index = (c.nextSubscription + i) % subs.length;
      const sub = subs[index];
      if (sub && !sub.stopped && sub.inFlight.size < sub.concurrency) {
        c.nextSubscription = index + 1;
        return sub;
      }
    }
    return undefined;
  }

  /** Redeliveries first, then new messages while below maxAckPending, as the server does. */
  function takeNext(c: MemoryConsumer): { message: StoredMessage; pending: Pending } | undefined {
    const stream = c.stream;
    for (let seq = c.redeliver.shift(); seq !== undefined; seq = c.redeliver.shift()) {
      const pending = c.pending.get(seq);
      if (pending?.state !== "queued") continue;
      const message = stream.messages.get(seq);
      if (message) return { message, pending };
      c.pending.delete(seq);
    }
    if (c.pending.size >= c.spec.maxAckPending) return undefined;
    // The cursor moves past messages the filter skips or retention already removed.
    for (; c.cursor <= stream.lastSeq; c.cursor++) {
      const message = stream.messages.get(c.cursor);
      if (message && filterMatches(c, message.subject)) {
        const pending: Pending = { seq: c.cursor, deliveryCount: 0, state: "queued" };
        c.pending.set(c.cursor++, pending);
        return { message, pending };
      }
    }
    return undefined;
  }

  function deliver(c: MemoryConsumer, sub: MemorySubscription, message: StoredMessage, pending: Pending): void {
    const deliveryCount = ++pending.deliveryCount;
    pending.state = "delivered";
    startAckTimer(c, pending);
    // nak and working from an older delivery are ignored; ack and term count, as on the server.
    const isCurrent = () => c.pending.get(pending.seq) === pending && pending.deliveryCount === deliveryCount;
    const msg = new MemoryBusMessage(message, deliveryCount, {
      ack: () => finish(c, pending),
      nak: (delayMs) => {
        if (isCurrent() && pending.state === "delivered") nak(c, pending, delayMs);
      },
      term: () => finish(c, pending),
      working: () => {
        if (isCurrent() && pending.state === "delivered") startAckTimer(c, pending);
      },
    });
    // The slot is taken now, synchronously, so the dispatch loop sees it as busy.
    const done: Promise<void> = Promise.resolve()
      .then(() => runHandler(msg, sub.handler, sub.options, () => {}))
      .finally(() => {
        sub.inFlight.delete(done);
        scheduleDispatch(c);
      });
    sub.inFlight.add(done);
  }

  function startAckTimer(c: MemoryConsumer, pending: Pending): void {
    clearTimeout(pending.timer);
    pending.timer = setTimeout(() => requeue(c, pending), c.spec.ackWaitMs).unref();
  }

  /** Back into the redelivery queue, unless maxDeliver is used up (the message then stays stored). */
  function requeue(c: MemoryConsumer, pending: Pending): void {
    clearTimeout(pending.timer);
    pending.timer = undefined;
    if (c.pending.get(pending.seq) !== pending) return;
    if (c.spec.maxDeliver > 0 && pending.deliveryCount >= c.spec.maxDeliver) {
      c.pending.delete(pending.seq);
    } else {
      pending.state = "queued";
      c.redeliver.push(pending.seq);
    }
    scheduleDispatch(c);
  }

  function nak(c: MemoryConsumer, pending: Pending, delayMs: number | undefined): void {
    clearTimeout(pending.timer);
    if (delayMs && delayMs > 0) {
      pending.state = "delayed";
      pending.timer = setTimeout(() => requeue(c, pending), delayMs).unref();
    } else {
      requeue(c, pending);
    }
  }

  /** Ack or term: never delivered again; both count as acknowledged for retention, as on nats-server. */
  function finish(c: MemoryConsumer, pending: Pending): void {
    if (c.pending.get(pending.seq) !== pending) return;
    clearTimeout(pending.timer);
    c.pending.delete(pending.seq);
    releaseMessage(c.stream, pending.seq);
    scheduleDispatch(c);
  }

  function consume(spec: ConsumerSpec, handler: MessageHandler, options: ConsumeOptions = {}): Subscription {
    const sub: MemorySubscription = {
      handler,
      options,
      concurrency: Math.max(1, Math.floor(options.concurrency ?? 1)),
      inFlight: new Set(),
      stopped: false,
    };
    let consumer: MemoryConsumer | undefined;
    let retryTimer: NodeJS.Timeout | undefined;
    // Like the NATS loop: a consumer that cannot be created yet (no stream) is retried until stop().
    const attach = () => {
      retryTimer = undefined;
      if (sub.stopped || closed) return;
      try {
        consumer = upsertConsumer(resolveConsumerSpec(spec));
      } catch {
        retryTimer = setTimeout(attach, CONSUME_RETRY_MS).unref();
        return;
      }
      consumer.subscriptions.push(sub);
      scheduleDispatch(consumer);
    };
    attach();
    const subscription: Subscription = {
      async stop() {
        sub.stopped = true;
        clearTimeout(retryTimer);
        if (consumer) consumer.subscriptions = consumer.subscriptions.filter((s) => s !== sub);
        await Promise.all(sub.inFlight);
        subscriptions.delete(subscription);
      },
    };
    subscriptions.add(subscription);
    return subscription;
  }

  async function streamInfo(name: string): Promise<StreamInfo> {
    assertOpen();
    const stream = getStream(name);
    purgeExpired(stream);
    return { name, messages: stream.messages.size, lastSeq: stream.lastSeq };
  }

  async function ping(): Promise<void> {
    assertOpen();
  }

  async function close(): Promise<void> {
    if (closed) return;
    // Handlers still settle their messages while the subscriptions stop; only then is the bus closed.
    await Promise.all([...subscriptions].map((s) => s.stop()));
    closed = true;
    for (const stream of streams.values()) {
      clearTimeout(stream.expiryTimer);
      for (const c of stream.consumers.values()) {
        for (const p of c.pending.values()) clearTimeout(p.timer);
      }
    }
  }

  return { ensureStream, ensureConsumer, publish, consume, streamInfo, ping, close };
}

interface Settlers {
  ack(): void;
  nak(delayMs?: number): void;
  term(): void;
  working(): void;
}

class MemoryBusMessage implements SettleableMessage {
  readonly subject: string;
  readonly data: Uint8Array;
  readonly headers: Record<string, string>;
  readonly redelivered: boolean;
  readonly seq: number;
  #settled = false;
  readonly #settlers: Settlers;

  constructor(
    message: StoredMessage,
    readonly deliveryCount: number,
    settlers: Settlers,
  ) {
    this.subject = message.subject;
    this.data = message.data.slice();
    this.headers = { ...message.headers };
    this.redelivered = deliveryCount > 1;
    this.seq = message.seq;
    this.#settlers = settlers;
  }

  get settled(): boolean {
    return this.#settled;
  }

  json<T = unknown>(): T {
    return JSON.parse(this.string()) as T;
  }

  string(): string {
    return new TextDecoder().decode(this.data);
  }

  async ack(): Promise<void> {
    if (this.settle()) this.#settlers.ack();
  }

  nak(delayMs?: number): void {
    if (this.settle()) this.#settlers.nak(delayMs);
  }

  term(): void {
    if (this.settle()) this.#settlers.term();
  }

  working(): void {
    if (!this.#settled) this.#settlers.working();
  }

  private settle(): boolean {
    if (this.#settled) return false;
    this.#settled = true;
    return true;
  }
}

function filterMatches(c: MemoryConsumer, subject: string): boolean {
  return c.spec.filterSubject === undefined || subjectMatches(c.spec.filterSubject, subject);
}

/** NATS subject matching: `*` is one token, `>` one or more trailing tokens. */
export function subjectMatches(pattern: string, subject: string): boolean {
  const p = pattern.split(".");
  const s = subject.split(".");
  for (let i = 0; i < p.length; i++) {
    if (p[i] === ">") return s.length > i;
    if (i >= s.length || (p[i] !== "*" && p[i] !== s[i])) return false;
  }
  return p.length === s.length;
}

/** True when some subject matches both patterns. */
export function subjectsOverlap(a: string, b: string): boolean {
  const x = a.split(".");
  const y = b.split(".");
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    if (x[i] === ">" || y[i] === ">") return true;
    if (x[i] !== "*" && y[i] !== "*" && x[i] !== y[i]) return false;
  }
  return x.length === y.length;
}
