/**
 * The intake of online evaluation: durable consumers (`online-evaluation`) on the run events and
 * the trace events decide, per enabled rule of the organization that matches a run (a generation
 * span), whether it is sampled (sampling.ts), and queue one scoring job per sampled (rule, target)
 * on the ONLINE_SCORES work queue. They run beside the request, never in it: the run was answered
 * (the spans stored) before its event left.
 */
import { CONSUMERS, RUN_EVENTS, TRACE_EVENTS } from "@kiln/contracts/bus-names";
import type { TraceIngestedEvent } from "@kiln/contracts/events";
import type { Bus, BusMessage, ConsumerSpec, Subscription } from "@kiln/kit/bus";
import type { Generation } from "@kiln/kit/bus/generation";
import type { Logger } from "@kiln/kit/logger";
import { createOrgCache, type OrgCache } from "../domain/org-cache.js";
import { ruleMatchesGeneration } from "./generations.js";
import { ONLINE_SCORES_STREAM, queueScoreJob } from "./jobs.js";
import type { OnlineCollections, OnlineRuleDoc } from "./online-store.js";
import { type CompletedRun, isSampled, isScorableRun, ruleMatchesRun } from "./sampling.js";

export const RUN_INTAKE: ConsumerSpec = {
  stream: RUN_EVENTS.stream,
  durable: CONSUMERS.onlineEvaluation,
  filterSubject: RUN_EVENTS.completed,
  ackWaitMs: 30_000,
};

export const TRACE_INTAKE: ConsumerSpec = {
  stream: TRACE_EVENTS.stream,
  durable: CONSUMERS.onlineEvaluation,
  filterSubject: TRACE_EVENTS.ingested,
  ackWaitMs: 30_000,
};

/** An organization's enabled rules, read again only after a rule changed (domain/org-cache.ts). */
export type RuleCache = OrgCache<OnlineRuleDoc[]>;

export const createRuleCache = (c: OnlineCollections, generation: Generation, logger: Logger): RuleCache =>
  createOrgCache((organizationId) => c.rules.find({ organizationId, enabled: true }), generation, logger);

export interface IntakeDeps {
  bus: Bus;
  logger: Logger;
  rules: RuleCache;
}

/**
 * The consumers of the intake: run.completed on execution's RUNS, trace.ingested on its
 * TRACE_EVENTS. A stream its service has not created yet is tried again every 2 s.
 */
export function createIntake(deps: IntakeDeps) {
  const subscriptions: Subscription[] = [];
  const retries = new Set<NodeJS.Timeout>();
  let stopped = false;

  async function runCompleted(msg: BusMessage): Promise<void> {
    const run = msg.json<CompletedRun>();
    if (!isScorableRun(run)) return;
    const rules = await deps.rules.get(run.organizationId);
    for (const rule of rules) {
      if (!ruleMatchesRun(rule, run) || !isSampled(rule, run.runId)) continue;
      await queueScoreJob(
        deps.bus,
        { ruleId: rule._id, organizationId: run.organizationId, runId: run.runId },
        run.runId,
      );
    }
  }

  async function traceIngested(msg: BusMessage): Promise<void> {
    const event = msg.json<TraceIngestedEvent>();
    const { traceId, generations } = event.data;
    const rules = (await deps.rules.get(event.organizationId)).filter((r) => r.target.kind === "traces");
    for (const rule of rules) {
      for (const g of generations) {
        const key = `${traceId}:${g.spanId}`;
        if (!ruleMatchesGeneration(rule, g) || !isSampled(rule, key)) continue;
        await queueScoreJob(
          deps.bus,
          { ruleId: rule._id, organizationId: event.organizationId, traceId, spanId: g.spanId },
          key,
        );
      }
    }
  }

  async function follow(spec: ConsumerSpec, handle: (msg: BusMessage) => Promise<void>): Promise<void> {
    if (stopped) return;
    try {
      await deps.bus.ensureConsumer(spec);
    } catch (err) {
      deps.logger.debug({ err, stream: spec.stream }, "online evaluation waits for this stream");
      const timer = setTimeout(() => {
        retries.delete(timer);
        void follow(spec, handle);
      }, 2_000);
      timer.unref();
      retries.add(timer);
      return;
    }
    subscriptions.push(
      deps.bus.consume(spec, handle, {
        concurrency: 4,
        onError: (err, msg) => deps.logger.warn({ err, seq: msg.seq }, "online evaluation intake failed; retrying"),
      }),
    );
  }

  return {
    async start() {
      stopped = false;
      await deps.bus.ensureStream(ONLINE_SCORES_STREAM);
      await follow(RUN_INTAKE, runCompleted);
      await follow(TRACE_INTAKE, traceIngested);
    },
    async stop() {
      stopped = true;
      for (const timer of retries) clearTimeout(timer);
      retries.clear();
      await Promise.all(subscriptions.splice(0).map((s) => s.stop()));
    },
  };
}
