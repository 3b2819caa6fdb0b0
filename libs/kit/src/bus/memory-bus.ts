/**
 * The bus in process, for tests and the embedded mode. It reproduces what Kiln relies on from
 * JetStream, checked by the same contract suite as the NATS backend: streams own
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
import { memoryBusMessage } from "./memory-bus-message.js";
import {
  type MemoryBusOptions,
  type MemoryConsumer,
  type MemoryStream,
  type MemorySubscription,
  newConsumer,
  newStream,
  type Pending,
  type StoredMessage,
} from "./memory-bus-state.js";
import { createMemoryListeners } from "./memory-listeners.js";
import * as retention from "./memory-retention.js";
import { assertFilterFits, assertStreamFits, filterMatches, subjectMatches } from "./memory-subjects.js";
import { type ResolvedConsumerSpec, resolveConsumerSpec, resolveStreamSpec } from "./resolve-spec.js";
import { runHandler } from "./run-handler.js";

export { subjectMatches, subjectsOverlap } from "./memory-subjects.js";

const CONSUME_RETRY_MS = 500;

export function createMemoryBus(busOptions: MemoryBusOptions = {}): Bus {
  const streams = new Map<string, MemoryStream>();
  const subscriptions = new Set<Subscription>();
  const listeners = createMemoryListeners();
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
    assertStreamFits(streams.values(), s);
    const existing = streams.get(s.name);
    if (!existing) {
      streams.set(s.name, newStream(s, busOptions));
      return;
    }
    if (existing.spec.retention !== s.retention) {
      throw new Error("stream configuration update can not change retention policy");
    }
    Object.assign(existing, newStream(s, busOptions, existing));
    retention.scheduleExpiry(existing, () => closed);
  }

  async function ensureConsumer(spec: ConsumerSpec): Promise<void> {
    assertOpen();
    upsertConsumer(resolveConsumerSpec(spec));
  }

  function upsertConsumer(c: ResolvedConsumerSpec): MemoryConsumer {
    const stream = getStream(c.stream);
    assertFilterFits(stream, c);
    const existing = stream.consumers.get(c.durable);
    if (existing) {
      // Like nats-server 2.9, adding an existing durable updates its settings.
      existing.spec = c;
      scheduleDispatch(existing);
      return existing;
    }
    const consumer = newConsumer(stream, c);
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
    retention.purgeMsgIds(stream, now);
    // A duplicate answers with the original sequence and stores nothing.
    const seen = options.msgId === undefined ? undefined : stream.msgIds.get(options.msgId);
    if (seen) return { stream: stream.spec.name, seq: seen.seq, duplicate: true };

    const seq = ++stream.lastSeq;
    if (options.msgId !== undefined) stream.msgIds.set(options.msgId, { seq, atMs: now });
    const data = typeof payload === "string" ? new TextEncoder().encode(payload) : payload.slice();
    listeners.notify(subject, data);
    const consumers = [...stream.consumers.values()];
    // An interest stream keeps only what some consumer will want; the sequence is used all the same.
    if (stream.spec.retention === "interest" && !consumers.some((c) => filterMatches(c, subject))) {
      return { stream: stream.spec.name, seq, duplicate: false };
    }
    retention.storeMessage(stream, { seq, subject, data, headers: { ...options.headers }, storedAtMs: now });
    retention.scheduleExpiry(stream, () => closed);
    for (const c of consumers) scheduleDispatch(c);
    return { stream: stream.spec.name, seq, duplicate: false };
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
    const msg = memoryBusMessage(message, deliveryCount, {
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
    retention.releaseMessage(c.stream, pending.seq);
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
    retention.purgeExpired(stream);
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
    listeners.clear();
    for (const stream of streams.values()) retention.clearTimers(stream);
  }

  return { ensureStream, ensureConsumer, publish, consume, listen: listeners.listen, streamInfo, ping, close };
}
