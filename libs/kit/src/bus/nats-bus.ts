/**
 * The bus on NATS JetStream, kept inside the nats-server 2.9 feature set: one
 * filter subject per consumer, no metadata. Streams use file storage; durations go to the server in
 * nanoseconds. The connection reconnects forever, and each consume loop outlives server restarts.
 */
import {
  AckPolicy,
  type ConsumerConfig,
  type ConsumerMessages,
  DeliverPolicy,
  JetStreamApiError,
  jetstream,
  jetstreamManager,
  RetentionPolicy,
  StorageType,
  type StreamConfig,
} from "@nats-io/jetstream";
import { connect, headers as createHeaders, type MsgHdrs, nanos } from "@nats-io/transport-node";
import { sleep } from "../lifecycle.js";
import {
  type Bus,
  BusUnavailableError,
  type ConsumeOptions,
  type ConsumerSpec,
  type Listener,
  type MessageHandler,
  type PublishAck,
  type PublishOptions,
  type Retention,
  type StreamSpec,
  type Subscription,
} from "./bus.js";
import { natsBusMessage } from "./nats-bus-message.js";
import { busErrorOf, disconnectSignal, withTimeout } from "./nats-errors.js";
import { resolveConsumerSpec, resolveStreamSpec } from "./resolve-spec.js";
import { runHandler } from "./run-handler.js";

export { busErrorOf } from "./nats-errors.js";

export interface NatsBusOptions {
  url: string;
  /** Connection name shown by the server, e.g. the service name. */
  name?: string;
  /**
   * Namespace of one platform on a shared NATS (NATS_PREFIX): stream names become `<prefix>_<name>`
   * and subjects `<prefix>.<subject>`, so two platforms never take each other's work. The code
   * above the bus keeps using the plain names.
   */
  prefix?: string;
  /** Copies JetStream keeps of each stream (NATS_STREAM_REPLICAS): 3 on a 3-node cluster; default 1. */
  streamReplicas?: number;
  log?: (msg: string, data?: object) => void;
}

/** Also the timeout of every other JetStream API request. */
const PUBLISH_TIMEOUT_MS = 5_000;
const PING_TIMEOUT_MS = 2_000;
const RECONNECT_WAIT_MS = 1_000;
const CLOSE_TIMEOUT_MS = 5_000;
const RETRY_MIN_MS = 250;
const RETRY_MAX_MS = 5_000;
/** Pull request lifetime; also how often a silent consumer is re-checked after a reconnect. */
const PULL_EXPIRES_MS = 10_000;
const STREAM_NAME_IN_USE = 10058;
const SUBJECTS_OVERLAP = 10065;

const RETENTION: Record<Retention, RetentionPolicy> = {
  limits: RetentionPolicy.Limits,
  interest: RetentionPolicy.Interest,
  workqueue: RetentionPolicy.Workqueue,
};

export async function createNatsBus(options: NatsBusOptions): Promise<Bus> {
  const log = options.log ?? (() => {});
  const prefix = options.prefix ?? "";
  const streamName = (name: string) => (prefix ? `${prefix}_${name}` : name);
  const subjectOf = (subject: string) => (prefix ? `${prefix}.${subject}` : subject);
  /** A stream name or subject as the code above the bus knows it (both add one separator). */
  const unprefixed = (name: string) => (prefix ? name.slice(prefix.length + 1) : name);
  const nc = await connect({
    servers: options.url,
    name: options.name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: RECONNECT_WAIT_MS,
    // nats.js otherwise builds two Errors (a RequestError and a TimeoutError, each capturing a
    // stack) for every request, in case it fails: every publish to JetStream and every read of the
    // catalog's change counter: 4.5 % of the execution service's busy time in a CPU profile under
    // load. A failed request still fails with its error, without the caller's frames in its stack.
    noAsyncTraces: true,
  });
  const jsm = await jetstreamManager(nc, { timeout: PUBLISH_TIMEOUT_MS });
  const js = jetstream(nc, { timeout: PUBLISH_TIMEOUT_MS });
  const subscriptions = new Set<Subscription>();
  let connected = true;
  let closing: Promise<void> | undefined;
  // Rejected at the next disconnect: the requests in flight then answer at once, not after their
  // timeout (a run would otherwise wait PUBLISH_TIMEOUT_MS on its counter read while the bus is away).
  let lost = disconnectSignal();

  void (async () => {
    for await (const status of nc.status()) {
      if (status.type === "disconnect") {
        connected = false;
        lost.fail();
        log("nats: disconnected", { server: status.server });
      } else if (status.type === "reconnect") {
        connected = true;
        lost = disconnectSignal();
        log("nats: reconnected", { server: status.server });
      }
    }
  })();

  /** A request's answer, or a BusUnavailableError as soon as the connection is (or goes) away. */
  function whileConnected<T>(request: Promise<T>): Promise<T> {
    if (!connected) {
      request.catch(() => undefined);
      return Promise.reject(new BusUnavailableError(new Error("nats: disconnected")));
    }
    return Promise.race([request, lost.promise]);
  }

  async function ensureStream(spec: StreamSpec): Promise<void> {
    const s = resolveStreamSpec(spec);
    const name = streamName(s.name);
    const config: Partial<StreamConfig> & { name: string } = {
      name,
      subjects: s.subjects.map(subjectOf),
      retention: RETENTION[s.retention],
      storage: StorageType.File,
      num_replicas: options.streamReplicas ?? 1,
      max_age: nanos(s.maxAgeMs ?? 0),
      max_bytes: s.maxBytes ?? -1,
      duplicate_window: nanos(s.duplicateWindowMs),
    };
    try {
      // add() with an identical config succeeds, so only a changed spec needs the update call.
      await jsm.streams.add(config);
    } catch (error) {
      // Two processes creating it at once: the later may hear "subjects overlap" (with this very stream).
      const overlap = error instanceof JetStreamApiError && error.code === SUBJECTS_OVERLAP;
      const inUse = error instanceof JetStreamApiError && error.code === STREAM_NAME_IN_USE;
      if (!inUse && !(overlap && (await jsm.streams.info(name).catch(() => null)))) throw error;
      await jsm.streams.update(name, config);
    }
  }

  async function ensureConsumer(spec: ConsumerSpec): Promise<void> {
    const c = resolveConsumerSpec(spec);
    const config: Partial<ConsumerConfig> = {
      durable_name: c.durable,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ack_wait: nanos(c.ackWaitMs),
      max_deliver: c.maxDeliver,
      max_ack_pending: c.maxAckPending,
    };
    if (c.filterSubject) config.filter_subject = subjectOf(c.filterSubject);
    // nats-server 2.9 treats add() of an existing durable as an update of its settings.
    await jsm.consumers.add(streamName(c.stream), config);
  }

  async function publish(
    subject: string,
    payload: string | Uint8Array,
    publishOptions: PublishOptions = {},
  ): Promise<PublishAck> {
    let hdrs: MsgHdrs | undefined;
    for (const [key, value] of Object.entries(publishOptions.headers ?? {})) {
      hdrs ??= createHeaders();
      hdrs.set(key, value);
    }
    try {
      const ack = await whileConnected(
        js.publish(subjectOf(subject), payload, {
          msgID: publishOptions.msgId,
          headers: hdrs,
          timeout: PUBLISH_TIMEOUT_MS,
        }),
      );
      return { stream: unprefixed(ack.stream), seq: ack.seq, duplicate: ack.duplicate };
    } catch (error) {
      // The client reports "no responders" on a publish as "jetstream is not enabled": no stream
      // owns the subject, or JetStream is not up yet on a server that is (re)starting.
      if (error instanceof Error && error.name === "JetStreamNotEnabled") {
        throw new BusUnavailableError(new Error(`no stream owns subject ${subject} (no responders)`, { cause: error }));
      }
      throw busErrorOf(error);
    }
  }

  function consume(spec: ConsumerSpec, handler: MessageHandler, consumeOptions: ConsumeOptions = {}): Subscription {
    const concurrency = Math.max(1, Math.floor(consumeOptions.concurrency ?? 1));
    const inFlight = new Set<Promise<void>>();
    const retryWait = new AbortController();
    let messages: ConsumerMessages | undefined;
    let stopped = false;
    const report = (what: string, error: unknown) =>
      log(`nats: ${what}`, { stream: spec.stream, durable: spec.durable, error: String(error) });

    const loop = (async () => {
      let failures = 0;
      while (!stopped && !nc.isClosed()) {
        try {
          await ensureConsumer(spec);
          const consumer = await js.consumers.get(streamName(spec.stream), spec.durable);
          // max_messages = concurrency, and the loop below holds the iterator (which sends the
          // next pull) until a slot is free, so the subscription holds little it cannot handle.
          messages = await consumer.consume({
            max_messages: concurrency,
            expires: PULL_EXPIRES_MS,
            abort_on_missing_resource: true,
          });
          if (stopped) break;
          for await (const m of messages) {
            // Pulled but not started when stop() came: handed back at once, not after ack-wait. The
            // iterator ends after the messages it had buffered.
            if (stopped) {
              m.nak();
              continue;
            }
            failures = 0;
            const msg = natsBusMessage(m, unprefixed(m.subject));
            const done: Promise<void> = runHandler(msg, handler, consumeOptions, report).finally(() =>
              inFlight.delete(done),
            );
            inFlight.add(done);
            while (inFlight.size >= concurrency) await Promise.race(inFlight);
          }
        } catch (error) {
          if (stopped) break;
          report("consume loop failed, retrying", error);
        } finally {
          messages?.stop();
        }
        if (stopped || nc.isClosed()) break;
        // The iterator ended (consumer or stream deleted, or an error): back off and start over.
        const delayMs = Math.min(RETRY_MAX_MS, RETRY_MIN_MS * 2 ** failures++);
        await sleep(delayMs, retryWait.signal);
      }
    })();

    const subscription: Subscription = {
      async stop() {
        stopped = true;
        retryWait.abort();
        messages?.stop();
        await loop;
        await Promise.all(inFlight);
        subscriptions.delete(subscription);
      },
    };
    subscriptions.add(subscription);
    return subscription;
  }

  /** A core NATS subscription: it sees what JetStream stores on the subject, without a consumer. */
  function listen(subject: string, listener: Listener): Subscription {
    const sub = nc.subscribe(subjectOf(subject), {
      callback: (error, m) => {
        if (!error) listener(unprefixed(m.subject), m.data);
      },
    });
    const subscription: Subscription = {
      async stop() {
        if (!sub.isClosed()) sub.unsubscribe();
        subscriptions.delete(subscription);
      },
    };
    subscriptions.add(subscription);
    return subscription;
  }

  async function streamInfo(name: string) {
    const info = await whileConnected(jsm.streams.info(streamName(name))).catch((error: unknown) =>
      Promise.reject(busErrorOf(error)),
    );
    return { name, messages: info.state.messages, lastSeq: info.state.last_seq };
  }

  async function ping(): Promise<void> {
    if (nc.isClosed() || !connected) throw new Error("nats: not connected");
    await withTimeout(nc.flush(), PING_TIMEOUT_MS, "nats: ping timed out");
  }

  function close(): Promise<void> {
    closing ??= (async () => {
      await Promise.all([...subscriptions].map((s) => s.stop()));
      if (nc.isClosed()) return;
      // drain() flushes pending acks; it cannot finish while disconnected, hence the timeout.
      await withTimeout(nc.drain(), CLOSE_TIMEOUT_MS, "nats: drain timed out").catch((error) =>
        log("nats: drain failed, closing", { error: String(error) }),
      );
      if (!nc.isClosed()) await nc.close();
    })();
    return closing;
  }

  return { ensureStream, ensureConsumer, publish, consume, listen, streamInfo, ping, close };
}
