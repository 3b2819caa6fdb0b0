/**
 * The intake of online evaluation: a durable consumer (`online-evaluation`) on the run events
 * decides, per enabled rule of the run's organization that matches it, whether the run is sampled
 * (sampling.ts), and queues one scoring job per sampled (rule, run) on the ONLINE_SCORES work
 * queue. It runs beside the request, never in it: the run was answered before its event left.
 */
import type { Bus, BusMessage, ConsumerSpec, StreamSpec, Subscription } from "@kiln/kit/bus";
import type { Logger } from "@kiln/kit/logger";
import { LRUCache } from "lru-cache";
import type { OnlineCollections, OnlineRuleDoc } from "./online-store.js";
import { type CompletedRun, isSampled, isScorableRun, ruleMatchesRun } from "./sampling.js";

/** The scoring jobs: a work queue, each job taken by one scorer. */
export const ONLINE_SCORES_STREAM: StreamSpec = {
  name: "ONLINE_SCORES",
  subjects: ["online-scores.>"],
  retention: "workqueue",
  duplicateWindowMs: 120_000,
};

/** One scoring job: a rule and the run, or the generation span, it scores. */
export interface ScoreJob {
  ruleId: string;
  organizationId: string;
  runId?: string;
  traceId?: string;
  spanId?: string;
}

export const RUN_INTAKE: ConsumerSpec = {
  stream: "RUNS",
  durable: "online-evaluation",
  filterSubject: "runs.completed.*",
  ackWaitMs: 30_000,
};

/** How long a process keeps an organization's enabled rules before reading them again. */
const RULES_TTL_MS = 5_000;

export interface RuleCache {
  enabledRules(organizationId: string): Promise<OnlineRuleDoc[]>;
  /** A rule of the organization changed in this process: read them afresh. */
  forget(organizationId: string): void;
}

export function createRuleCache(c: OnlineCollections): RuleCache {
  const cache = new LRUCache<string, Promise<OnlineRuleDoc[]>>({ max: 1_000, ttl: RULES_TTL_MS });
  return {
    enabledRules(organizationId) {
      let found = cache.get(organizationId);
      if (!found) {
        found = c.rules.find({ organizationId, enabled: true });
        found.catch(() => cache.delete(organizationId));
        cache.set(organizationId, found);
      }
      return found;
    },
    forget: (organizationId) => cache.delete(organizationId),
  };
}

/** Queues the job once per (rule, target): the stream de-duplicates a repeat within its window. */
export async function queueScoreJob(bus: Bus, job: ScoreJob, targetKey: string): Promise<void> {
  await bus.publish(`online-scores.${job.runId ? "run" : "generation"}`, JSON.stringify(job), {
    msgId: `${job.ruleId}:${targetKey}`,
  });
}

export interface IntakeDeps {
  bus: Bus;
  logger: Logger;
  rules: RuleCache;
}

/** The run consumer; RUNS is execution's stream, so until it exists the consumer is tried again every 2 s. */
export function createRunIntake(deps: IntakeDeps) {
  let subscription: Subscription | undefined;
  let retry: NodeJS.Timeout | undefined;
  let stopped = false;

  async function handle(msg: BusMessage): Promise<void> {
    const run = msg.json<CompletedRun>();
    if (!isScorableRun(run) || run.status === "running") return;
    const rules = await deps.rules.enabledRules(run.organizationId);
    for (const rule of rules) {
      if (!ruleMatchesRun(rule, run) || !isSampled(rule, run.runId)) continue;
      await queueScoreJob(
        deps.bus,
        { ruleId: rule._id, organizationId: run.organizationId, runId: run.runId },
        run.runId,
      );
    }
  }

  async function follow(): Promise<void> {
    if (stopped) return;
    try {
      await deps.bus.ensureConsumer(RUN_INTAKE);
    } catch (err) {
      deps.logger.debug({ err }, "online evaluation waits for the RUNS stream");
      retry = setTimeout(() => void follow(), 2_000);
      retry.unref();
      return;
    }
    subscription = deps.bus.consume(RUN_INTAKE, handle, {
      concurrency: 4,
      onError: (err, msg) => deps.logger.warn({ err, seq: msg.seq }, "online evaluation intake failed; retrying"),
    });
  }

  return {
    async start() {
      stopped = false;
      await deps.bus.ensureStream(ONLINE_SCORES_STREAM);
      await follow();
    },
    async stop() {
      stopped = true;
      clearTimeout(retry);
      await subscription?.stop();
      subscription = undefined;
    },
  };
}
