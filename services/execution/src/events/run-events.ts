import { setTimeout as sleep } from "node:timers/promises";
import { create, toJsonString } from "@bufbuild/protobuf";
import { RUN_EVENTS, runCompletedSubject } from "@kiln/contracts/bus-names";
import type { Bus } from "@kiln/kit/bus";
import { createBatchDeleter, createRelayer, type RelayStep, refusedStep, relayIntents } from "@kiln/kit/bus/outbox";
import type { Logger } from "@kiln/kit/logger";
import { type Collection, createGroupInserter, type Store } from "@kiln/kit/store";
import { RunCompletedSchema } from "@kiln/proto/events";
import { runSummaryToProto } from "../rpc/run-proto.js";
import { expireLeasedRun } from "../runs/run-leases.js";
import type { RunDoc } from "../store/run-store.js";

/** Stream of run events (api.md "Events"): interest retention, one durable consumer per service. */
export const RUNS_STREAM = {
  name: RUN_EVENTS.stream,
  subjects: [...RUN_EVENTS.subjects],
  retention: "interest" as const,
  duplicateWindowMs: 120_000,
};

/**
 * The run.completed payload: protobuf JSON of kiln.events.v1.RunCompleted with every field present
 * (zeros and "" included), as docs/events/run.completed.schema.json describes it.
 */
export function runCompletedPayload(run: RunDoc): string {
  return toJsonString(
    RunCompletedSchema,
    create(RunCompletedSchema, {
      runId: run._id,
      kind: run.kind,
      organizationId: run.organizationId,
      status: run.status,
      ...runSummaryToProto(run),
      completedAt: run.completedAt.toISOString(),
    }),
    { alwaysEmitImplicit: true },
  );
}

/**
 * One pending run.completed, keyed by the run id. The collection holds only the events not
 * published yet, so the relay reads a few small documents instead of searching the runs (FerretDB
 * pushes down nothing but `_id` equality: a query on a flag of the runs would read them all).
 */
export interface RunEventIntentDoc {
  _id: string;
  createdAt: Date;
}

export function runEventIntentCollection(store: Store): Collection<RunEventIntentDoc> {
  return store.collection<RunEventIntentDoc>("run_event_outbox");
}

export interface RunEventOutbox {
  /**
   * Records, before the run is stored, that a run.completed will be due for it: the relay of any
   * replica publishes it should this process die between storing the run and publishing.
   */
  intend(runId: string): Promise<void>;
  /** Forgets an intent whose run will never be stored (storing it failed). Never throws. */
  abandon(runId: string): void;
  /**
   * Publishes the stored run's event in the background, a little later (PUBLISH_AFTER_MS):
   * the caller does not wait for the bus.
   * A publish the bus refuses stays pending for the relay. Never throws.
   */
  publish(run: RunDoc): void;
  /** Resolves once everything handed to `publish` was published (or left to the relay) and cleared. */
  settled(): Promise<void>;
  /** Publishes the pending events due for the relay (oldest first); returns how many were published. */
  relayPending(): Promise<number>;
  /** Relays pending events every `intervalMs` until stopped. */
  start(intervalMs?: number): void;
  /** Stops the relay and waits for the background publishing of this process. */
  stop(): Promise<void>;
}

export interface RunEventOutboxOptions {
  /**
   * How old an intent must be before the relay takes it over from the process that stored the run
   * (that process publishes within milliseconds unless the bus is down or it died); default 5000.
   */
  relayAfterMs?: number;
  /** An intent whose run still does not exist after this long was never stored; default 1 hour. */
  orphanAfterMs?: number;
  now?: () => Date;
}

/**
 * How long after a run is stored its run.completed is handed to the bus. What the event sets off
 * (the payload built and written to NATS, the webhook fan-out's delivery and acknowledgement, the
 * intent's delete) is work for the processes the caller's answer still has to cross, and for the
 * same cores: a millisecond after the insert, it ran while the answer travelled back through the
 * gateway and while the caller's next run came in. Ten milliseconds puts it behind both at one
 * connection (a run's answer has left, and the next run waits on its model, by then); under load,
 * the runs stored within the delay go out together. Measured (distributed, one connection, added
 * latency p50 over the stub): 1 ms 8.3–8.9, 10 ms 6.5–7.6 (two interleaved runs of three rounds).
 */
const PUBLISH_AFTER_MS = 10;

/**
 * The transactional outbox without transactions (FerretDB has none). Before a run is stored, an
 * intent keyed by its id is inserted; the run is stored; the event is published in the background
 * with the run id as the JetStream message id (so the stream de-duplicates a publish that is
 * retried) and the intent deleted, in batches. Intents left behind (the bus was down, the process
 * died) are published by the relay once the run exists in a final state. Nothing is lost, the
 * request never waits for the bus, and nothing is stored twice.
 */
export function createRunEventOutbox(
  runs: Collection<RunDoc>,
  intents: Collection<RunEventIntentDoc>,
  bus: Bus,
  logger: Logger,
  options: RunEventOutboxOptions = {},
): RunEventOutbox {
  const relayAfterMs = options.relayAfterMs ?? 5_000;
  const orphanAfterMs = options.orphanAfterMs ?? 3_600_000;
  const now = options.now ?? (() => new Date());
  const cleared = createBatchDeleter(intents, logger, "run events");
  const intentInserts = createGroupInserter(intents);
  let due: RunDoc[] = [];

  async function send(run: RunDoc): Promise<RelayStep> {
    try {
      await bus.publish(runCompletedSubject(run.kind), runCompletedPayload(run), { msgId: run._id });
    } catch (err) {
      return refusedStep(logger, err, { runId: run._id, event: "run.completed" });
    }
    await cleared.add(run._id);
    return "published";
  }

  /** An intent whose run exists in a final state is published; one with no run is cleared once orphaned. */
  const relay = () =>
    relayIntents(intents, { relayAfterMs, now }, async (intent, ageMs): Promise<RelayStep> => {
      const run = await runs.findOne({ _id: intent._id });
      if (!run) {
        if (ageMs >= orphanAfterMs) await cleared.add(intent._id);
        return "skipped";
      }
      if (run.status !== "running") return send(run);
      // Running: published once it completes, or failed here once its process's lease ran out.
      const failed = await expireLeasedRun(runs, run, now());
      if (!failed) return "skipped";
      logger.warn({ runId: run._id }, "asynchronous run whose process stopped stored as failed");
      return send(failed);
    });

  const relayer = createRelayer(relay, () => cleared.flushed(), logger);
  return {
    async intend(runId) {
      await intentInserts.insert({ _id: runId, createdAt: now() });
    },
    abandon(runId) {
      relayer.track(cleared.add(runId));
    },
    publish(run) {
      // After the caller's answer has gone out: building the payload and handing it to the bus (in
      // one process, to its subscribers) is not part of the request.
      due.push(run);
      if (due.length > 1) return;
      relayer.track(
        sleep(PUBLISH_AFTER_MS).then(() => {
          const runs = due;
          due = [];
          return Promise.all(runs.map(send));
        }),
      );
    },
    settled: relayer.settled,
    relayPending: relayer.relayPending,
    start: relayer.start,
    stop: relayer.stop,
  };
}
