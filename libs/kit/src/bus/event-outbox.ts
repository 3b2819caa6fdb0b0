/**
 * An outbox for events whose payload is known when the change is written (catalog events): each
 * event is stored as an intent holding its subject and payload, published in the background with
 * its id as the JetStream message id (the stream de-duplicates a publish that is retried), and
 * cleared once the bus took it. Intents the bus did not take (it was down, the process stopped)
 * are published by the relay of any replica. The request never waits for the bus, and an event
 * the bus refused is published later, not lost.
 */
import type { EventEnvelope } from "@kiln/contracts/events";
import type { Logger } from "../logger.js";
import { type Collection, isDuplicateKeyError } from "../store/store.js";
import { type Bus, BusUnavailableError, type StreamSpec } from "./bus.js";

export interface EventIntentDoc {
  /** The event's id: the JetStream message id. */
  _id: string;
  subject: string;
  payload: string;
  createdAt: Date;
}

export interface OutboxEvent {
  id: string;
  subject: string;
  payload: string;
}

/**
 * The outbox entry of one event `type` about the source `sourceId` (a version, a label move, a
 * run): its id is `<type>:<sourceId>`, the message id the stream de-duplicates on, so the same
 * change repeated publishes it once.
 */
export function outboxEventOf(
  subject: string,
  envelope: Omit<EventEnvelope<string, object>, "id" | "occurredAt"> & { sourceId: string; at: Date },
): OutboxEvent {
  const { type, sourceId, organizationId, at, data } = envelope;
  const id = `${type}:${sourceId}`;
  const payload: EventEnvelope<string, object> = { id, type, organizationId, occurredAt: at.toISOString(), data };
  return { id, subject, payload: JSON.stringify(payload) };
}

/** A stream of events kept a week (limits retention): consumers that attach later, webhooks included, still find them. */
export function eventStream(name: string, subjects: string[]): StreamSpec {
  return { name, subjects, retention: "limits", duplicateWindowMs: 120_000, maxAgeMs: 7 * 24 * 3_600_000 };
}

export interface EventOutbox {
  /** Stores the events' intents (awaited), then publishes them in the background. */
  add(events: OutboxEvent[]): Promise<void>;
  /** Resolves once everything handed to `add` was published (or left to the relay) and cleared. */
  settled(): Promise<void>;
  /** Publishes the pending events older than `relayAfterMs` (oldest first); returns how many. */
  relayPending(): Promise<number>;
  start(intervalMs?: number): void;
  stop(): Promise<void>;
}

const RELAY_PAGE = 100;

export function createEventOutbox(
  intents: Collection<EventIntentDoc>,
  bus: Bus,
  logger: Logger,
  options: { relayAfterMs?: number; now?: () => Date } = {},
): EventOutbox {
  const relayAfterMs = options.relayAfterMs ?? 5_000;
  const now = options.now ?? (() => new Date());
  const cleared = createBatchDeleter(intents, logger, "events");

  async function send(event: OutboxEvent): Promise<RelayStep> {
    try {
      await bus.publish(event.subject, event.payload, { msgId: event.id });
    } catch (err) {
      return refusedStep(logger, err, { eventId: event.id, subject: event.subject });
    }
    await cleared.add(event.id);
    return "published";
  }

  const relay = () =>
    relayIntents(intents, { relayAfterMs, now }, (intent) =>
      send({ id: intent._id, subject: intent.subject, payload: intent.payload }),
    );

  const relayer = createRelayer(relay, () => cleared.flushed(), logger);
  return {
    settled: relayer.settled,
    relayPending: relayer.relayPending,
    start: relayer.start,
    stop: relayer.stop,
    async add(events) {
      if (events.length === 0) return;
      const at = now();
      const docs = events.map((e) => ({ _id: e.id, subject: e.subject, payload: e.payload, createdAt: at }));
      try {
        // One statement for a change's events (an ingestion's trace.ingested, one per trace).
        await intents.insertMany(docs);
      } catch (err) {
        if (!isDuplicateKeyError(err)) throw err;
        // The same event added again (a repeated completion) while the first is still pending:
        // the others go in one by one, the ones already there are kept.
        for (const d of docs) {
          try {
            await intents.insertOne(d);
          } catch (e) {
            if (!isDuplicateKeyError(e)) throw e;
          }
        }
      }
      for (const event of events) void relayer.track(send(event));
    },
  };
}

/** What relaying one intent came to: published, left for a later relay, or the bus is away (stop). */
export type RelayStep = "published" | "skipped" | "stop";

/**
 * What a publish the bus refused means for the relay: the bus away (BusUnavailableError) stops
 * this relay turn, as every later publish would fail too; a refusal of this one message (too
 * large for the server, a subject no stream owns any more) leaves it pending, logged as an error,
 * and the relay goes on to the next, so that one event never holds back the others.
 */
export function refusedStep(logger: Logger, err: unknown, about: Record<string, unknown>): RelayStep {
  if (err instanceof BusUnavailableError) {
    logger.warn({ err, ...about }, "event not published yet; the outbox will retry");
    return "stop";
  }
  logger.error({ err, ...about }, "the bus refused this event; it stays pending and the relay goes on");
  return "skipped";
}

/**
 * The relay's walk over the pending intents, shared by every outbox: oldest first, a page at a
 * time, each intent at least `relayAfterMs` old handed to `relayOne` with its age; stops at the
 * first the bus refused. Returns how many were published.
 */
export async function relayIntents<T extends { _id: string; createdAt: Date }>(
  intents: Collection<T>,
  options: { relayAfterMs: number; now: () => Date },
  relayOne: (intent: T, ageMs: number) => Promise<RelayStep>,
): Promise<number> {
  let published = 0;
  let after = "";
  for (;;) {
    const page = await intents.find(after ? { _id: { $gt: after } } : {}, { sort: { _id: 1 }, limit: RELAY_PAGE });
    const at = options.now().getTime();
    for (const intent of page) {
      const ageMs = at - intent.createdAt.getTime();
      if (ageMs < options.relayAfterMs) continue;
      const step = await relayOne(intent, ageMs);
      if (step === "stop") return published;
      if (step === "published") published++;
    }
    if (page.length < RELAY_PAGE) return published;
    after = page[page.length - 1]?._id ?? after;
  }
}

/**
 * What every outbox does besides publishing: tracks its background publishes (`settled` waits for
 * them and the clearing of their intents), runs one relay at a time, every `intervalMs` once
 * started, and on `stop` waits for the relay and the background work.
 */
export function createRelayer(relay: () => Promise<number>, flushed: () => Promise<void>, logger: Logger) {
  const inFlight = new Set<Promise<unknown>>();
  let timer: NodeJS.Timeout | undefined;
  let relaying: Promise<number> | undefined;
  const relayer = {
    track<T>(p: Promise<T>): Promise<T> {
      inFlight.add(p);
      void p.finally(() => inFlight.delete(p)).catch(() => undefined);
      return p;
    },
    async settled(): Promise<void> {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
      await flushed();
    },
    relayPending(): Promise<number> {
      // One relay at a time per process.
      relaying ??= relay().finally(() => {
        relaying = undefined;
      });
      return relaying;
    },
    start(intervalMs = 1_000): void {
      timer = setInterval(() => {
        relayer.relayPending().catch((err: unknown) => logger.warn({ err }, "outbox relay failed"));
      }, intervalMs);
      timer.unref();
    },
    async stop(): Promise<void> {
      clearInterval(timer);
      await relaying;
      await relayer.settled();
    },
  };
  return relayer;
}

/**
 * Deletes intents in batches: ids that arrive while a delete is running go out together with the
 * next one, so under load one delete clears many. A failed delete leaves its intents for the relay,
 * which then publishes them again (the stream drops the duplicates by message id).
 */
export function createBatchDeleter(intents: Collection<{ _id: string }>, logger: Logger, what: string) {
  let queued: string[] = [];
  let running: Promise<void> | undefined;

  async function drain(): Promise<void> {
    try {
      while (queued.length > 0) {
        const batch = queued;
        queued = [];
        try {
          await intents.deleteMany(batch.length === 1 ? { _id: batch[0] } : { _id: { $in: batch } });
        } catch (err) {
          logger.warn({ err, count: batch.length }, `could not clear published ${what}; the relay will`);
        }
      }
    } finally {
      // In the same synchronous step as the last look at the queue: an id added later starts a new drain.
      running = undefined;
    }
  }

  return {
    /** Resolves once the id is cleared (or clearing it failed). */
    add(id: string): Promise<void> {
      queued.push(id);
      running ??= drain();
      return running;
    },
    async flushed(): Promise<void> {
      await running;
    },
  };
}
