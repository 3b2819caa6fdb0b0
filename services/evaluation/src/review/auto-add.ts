/**
 * Queues' auto-add rules (docs/review.md "Adding by rule"): a durable consumer of run.completed on
 * the RUNS stream adds a deterministic sample of the runs of a rule's prompt, skill or agent
 * (domain/run-sample.ts, as online evaluation samples), through a label when the rule names one.
 * A target is in a queue once (a unique key), so a redelivered event never adds a run twice. Judge
 * runs and the runs an evaluation made (`evaluationRunId` on the event) are never added. A queue's
 * change reaches every process's consumer before it is answered (domain/org-cache.ts).
 */
import { CONSUMERS, RUN_EVENTS } from "@kiln/contracts/bus-names";
import type { Bus, BusMessage, Subscription } from "@kiln/kit/bus";
import type { Generation } from "@kiln/kit/bus/generation";
import type { Logger } from "@kiln/kit/logger";
import { createOrgCache, type OrgCache } from "../domain/org-cache.js";
import { type CompletedRun, inSample, isProductionRun, runMatches } from "../domain/run-sample.js";
import type { Items } from "./items.js";
import type { QueueDoc, ReviewCollections } from "./review-store.js";

export const RULES_CONSUMER = {
  stream: RUN_EVENTS.stream,
  durable: CONSUMERS.annotationQueueRules,
  filterSubject: RUN_EVENTS.completed,
};

export interface AutoAddDeps {
  bus: Bus;
  logger: Logger;
  /** The organization's queues that have an auto-add rule (autoAddQueues), cached per organization. */
  queues: OrgCache<QueueDoc[]>;
  items: Items;
}

/** Each organization's queues with an auto-add rule, read again only after a queue changed (domain/org-cache.ts). */
export const autoAddQueues = (collections: ReviewCollections, generation: Generation, logger: Logger) =>
  createOrgCache(
    (organizationId) => collections.queues.find({ organizationId, autoAdd: { $ne: null } }),
    generation,
    logger,
  );

export function startAutoAdd(deps: AutoAddDeps) {
  const subscriptions: Subscription[] = [];
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;

  async function matchingQueues(run: CompletedRun): Promise<QueueDoc[]> {
    if (!run.promptId && !run.skillId && !run.agentId) return [];
    const queues = await deps.queues.get(run.organizationId);
    return queues.filter((q) => {
      const rule = q.autoAdd;
      return (
        !!rule &&
        runMatches({ kind: rule.kind, id: rule.id, label: rule.label ?? "" }, run) &&
        inSample(q._id, run.runId, rule.sampleRate)
      );
    });
  }

  async function handle(msg: BusMessage) {
    const run = msg.json<CompletedRun>();
    if (!run.runId || !run.organizationId || !isProductionRun(run)) return;
    for (const q of await matchingQueues(run))
      await deps.items.insertTargets(q, [{ type: "run", id: run.runId }], `rule:${q._id}`);
  }

  async function follow() {
    if (stopped) return;
    try {
      await deps.bus.ensureConsumer(RULES_CONSUMER);
    } catch (err) {
      deps.logger.debug({ err }, "annotation queue rules wait for the RUNS stream");
      retry = setTimeout(() => void follow(), 2_000);
      retry.unref();
      return;
    }
    subscriptions.push(
      deps.bus.consume(RULES_CONSUMER, handle, {
        concurrency: 2,
        onError: (err) => deps.logger.warn({ err }, "an annotation queue rule failed; retrying"),
      }),
    );
  }

  void follow();
  return {
    async stop() {
      stopped = true;
      clearTimeout(retry);
      await Promise.all(subscriptions.map((s) => s.stop()));
    },
  };
}
