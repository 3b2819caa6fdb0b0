import { CONSUMERS, WORK_QUEUES } from "@kiln/contracts/bus-names";
import type { Bus, StreamSpec } from "@kiln/kit/bus";
import type { Logger } from "@kiln/kit/logger";
import type { Collection } from "@kiln/kit/store";
import type { RunCompletion } from "../run-completion.js";
import {
  caseIdsOf,
  type EvaluationRunDoc,
  type ProgressDoc,
  resultIdOf,
  type TargetLabel,
} from "../store/evaluation-store.js";

/** The work queue (api.md "Events"): each message is one attempt of a case on one target, taken by one worker. */
export const EVALUATIONS_STREAM: StreamSpec = {
  name: WORK_QUEUES.evaluations.stream,
  subjects: [WORK_QUEUES.evaluations.subject],
  retention: "workqueue",
  duplicateWindowMs: 120_000,
};

export const WORK_SUBJECT = WORK_QUEUES.evaluations.subject;

/** The durable consumer every worker of every replica shares: each message goes to one of them. */
export const WORKERS_DURABLE = CONSUMERS.evaluationWorkers;

export interface WorkItem {
  evaluationRunId: string;
  caseId: string;
  label: TargetLabel;
  /** 0-based; absent: 0. */
  attempt?: number;
  /**
   * Published again by the relay (after a bus outage, or by a restarted embedded platform): the
   * item may have a result already.
   */
  again?: true;
}

/** Attempt after attempt, so that an early look at a running run sees every case once first. */
export function workItemsOf(
  run: Pick<EvaluationRunDoc, "_id" | "caseIds" | "caseIdsJson" | "targets" | "repeats">,
  again = false,
): WorkItem[] {
  const items: WorkItem[] = [];
  const caseIds = caseIdsOf(run);
  for (let attempt = 0; attempt < (run.repeats ?? 1); attempt++) {
    for (const caseId of caseIds) {
      for (const t of run.targets) {
        items.push({
          evaluationRunId: run._id,
          caseId,
          label: t.label,
          ...(attempt > 0 ? { attempt } : {}),
          ...(again ? { again: true as const } : {}),
        });
      }
    }
  }
  return items;
}

/**
 * Publishes every item of a run, each with its result id as the message id (so a retried publish
 * is de-duplicated by the stream, and a late duplicate finds the result already stored), then marks
 * the run published. Rejects when the bus does not take a message: the relay retries the run.
 */
export async function publishWork(
  runs: Collection<EvaluationRunDoc>,
  bus: Bus,
  run: EvaluationRunDoc,
  again = false,
): Promise<void> {
  for (const item of workItemsOf(run, again)) {
    await bus.publish(WORK_SUBJECT, JSON.stringify(item), {
      msgId: resultIdOf(item.evaluationRunId, item.caseId, item.label, item.attempt),
    });
  }
  await runs.updateOne({ _id: run._id }, { $set: { workPublished: true } });
}

export interface WorkRelay {
  /** Publishes the work of runs still marked unpublished (oldest first); returns how many runs. */
  relayPending(): Promise<number>;
  /** Relays every `intervalMs` until stopped; the timer does not keep the process alive. */
  start(intervalMs?: number): void;
  stop(): Promise<void>;
}

/**
 * The outbox of evaluation work, as execution's run-event outbox: a run is stored first with
 * `workPublished: false`, so a bus outage at start leaves it for this relay, never lost.
 */
export function createWorkRelay(
  runs: Collection<EvaluationRunDoc>,
  bus: Bus,
  logger: Logger,
  sweep?: { completion: RunCompletion; progress: Collection<ProgressDoc> },
): WorkRelay {
  let timer: NodeJS.Timeout | undefined;
  let relaying: Promise<number> | undefined;
  /** resultsIn of each running run at the previous sweep. */
  const seen = new Map<string, number>();

  async function relay(): Promise<number> {
    // Every round: a running run whose result counter has not moved since the last round gets the
    // exact count, so it completes within two rounds even when the counter a worker bumps after
    // each result missed one (a worker stopped or killed between the two writes). Runs that move
    // are left alone: the exact count reads every result on FerretDB.
    if (sweep) {
      const running = await runs.find({ status: "running" }, { limit: 100 });
      for (const run of running) {
        const count = (await sweep.progress.findOne({ _id: run._id }))?.resultsIn ?? 0;
        if (seen.get(run._id) === count) await sweep.completion.completeIfDone(run);
        seen.set(run._id, count);
      }
      for (const id of seen.keys()) if (!running.some((r) => r._id === id)) seen.delete(id);
    }
    let published = 0;
    const pending = await runs.find({ workPublished: false }, { sort: { _id: 1 }, limit: 100 });
    for (const run of pending) {
      try {
        await publishWork(runs, bus, run, true);
        published++;
      } catch (err) {
        logger.warn({ err, evaluationRunId: run._id }, "evaluation work not published yet; will retry");
        break;
      }
    }
    return published;
  }

  return {
    relayPending() {
      relaying ??= relay().finally(() => {
        relaying = undefined;
      });
      return relaying;
    },
    start(intervalMs = 2_000) {
      timer = setInterval(() => {
        this.relayPending().catch((err: unknown) => logger.warn({ err }, "evaluation work relay failed"));
      }, intervalMs);
      timer.unref();
    },
    async stop() {
      clearInterval(timer);
      await relaying?.catch(() => undefined);
    },
  };
}
