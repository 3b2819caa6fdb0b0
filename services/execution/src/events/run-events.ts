import { create, toJsonString } from "@bufbuild/protobuf";
import type { Bus } from "@kiln/kit/bus";
import type { Logger } from "@kiln/kit/logger";
import type { Collection } from "@kiln/kit/store";
import { RunCompletedSchema } from "@kiln/proto/events";
import type { RunDoc } from "../store/run-store.js";

/** Stream of run events (api.md "Events"): interest retention, one durable consumer per service. */
export const RUNS_STREAM = {
  name: "RUNS",
  subjects: ["runs.>"],
  retention: "interest" as const,
  duplicateWindowMs: 120_000,
};

export const runCompletedSubject = (kind: RunDoc["kind"]) => `runs.completed.${kind}`;

/** The run.completed payload: protobuf JSON of kiln.events.v1.RunCompleted. */
export function runCompletedPayload(run: RunDoc): string {
  return toJsonString(
    RunCompletedSchema,
    create(RunCompletedSchema, {
      runId: run._id,
      kind: run.kind,
      organizationId: run.organizationId,
      status: run.status,
      provider: run.provider ?? undefined,
      model: run.model ?? undefined,
      usage: { inputTokens: BigInt(run.usage.inputTokens), outputTokens: BigInt(run.usage.outputTokens) },
      estimatedCostUsd: run.estimatedCostUsd ?? undefined,
      latencyMs: BigInt(run.latencyMs),
      toolCallCount: BigInt(run.toolCallCount),
      completedAt: run.completedAt.toISOString(),
      promptId: run.promptId,
      promptVersionId: run.promptVersionId,
      skillId: run.skillId,
      skillVersionId: run.skillVersionId,
      agentId: run.agentId ?? "",
      agentVersionId: run.agentVersionId ?? "",
    }),
  );
}

export interface RunEventOutbox {
  /** Publishes at once when the bus is up; otherwise the relay publishes it later. Never throws. */
  publish(run: RunDoc): Promise<void>;
  /** Publishes what is still pending (oldest first); returns how many were published. */
  relayPending(): Promise<number>;
  /** Relays pending events every `intervalMs` until stopped. */
  start(intervalMs?: number): void;
  stop(): Promise<void>;
}

/**
 * The transactional outbox without transactions (FerretDB has none): the run is stored first with
 * `eventPublished: false`, then published with the run id as the JetStream message id (so the
 * stream de-duplicates a publish that is retried), then marked. A bus outage leaves runs pending;
 * the relay publishes them when the bus is back. Nothing is lost, and nothing is stored twice.
 */
export function createRunEventOutbox(runs: Collection<RunDoc>, bus: Bus, logger: Logger): RunEventOutbox {
  let timer: NodeJS.Timeout | undefined;
  let relaying: Promise<number> | undefined;

  async function send(run: RunDoc): Promise<boolean> {
    try {
      await bus.publish(runCompletedSubject(run.kind), runCompletedPayload(run), { msgId: run._id });
      await runs.updateOne({ _id: run._id }, { $set: { eventPublished: true } });
      return true;
    } catch (err) {
      await runs.updateOne({ _id: run._id }, { $inc: { eventAttempts: 1 } }).catch(() => undefined);
      logger.warn({ err, runId: run._id }, "run.completed not published yet; the outbox will retry");
      return false;
    }
  }

  async function relay(): Promise<number> {
    let published = 0;
    for (;;) {
      const pending = await runs.find({ eventPublished: false }, { sort: { _id: 1 }, limit: 100 });
      for (const run of pending) {
        if (!(await send(run))) return published;
        published++;
      }
      if (pending.length < 100) return published;
    }
  }

  return {
    async publish(run) {
      await send(run);
    },
    relayPending() {
      // One relay at a time per process.
      relaying ??= relay().finally(() => {
        relaying = undefined;
      });
      return relaying;
    },
    start(intervalMs = 1_000) {
      timer = setInterval(() => {
        this.relayPending().catch((err: unknown) => logger.warn({ err }, "outbox relay failed"));
      }, intervalMs);
      timer.unref();
    },
    async stop() {
      clearInterval(timer);
      await relaying;
    },
  };
}
