/**
 * Online evaluation in the evaluation process (docs/observability.md "Online evaluation"): the
 * OnlineEvaluationService RPCs, and (with the workers) the run intake and the scorers.
 */
import type { ConnectRouter } from "@connectrpc/connect";
import type { Bus } from "@kiln/kit/bus";
import type { Generation } from "@kiln/kit/bus/generation";
import type { Logger } from "@kiln/kit/logger";
import type { Store } from "@kiln/kit/store";
import { startSweeper } from "@kiln/kit/sweeper";
import type { Access } from "../access.js";
import { generationReader, type TraceClient } from "./generations.js";

export type { TraceClient } from "./generations.js";

import { createIntake, createRuleCache } from "./intake.js";
import { registerOnlineRpc } from "./online-rpc.js";
import { ensureOnlineIndexes, onlineCollections } from "./online-store.js";
import { DEFAULT_SCORE_RETENTION_MS, sweepScores } from "./retention.js";
import { createOnlineRules } from "./rules.js";
import { createScorers, type OnlineExecutionClient } from "./scorer.js";
import { createOnlineScores } from "./scores.js";

export type { OnlineExecutionClient } from "./scorer.js";

export interface OnlineModuleDeps {
  store: Store;
  bus: Bus;
  logger: Logger;
  access: Access;
  now: () => Date;
  /** The execution calls of the scorers; none (or `workers: false`): rules and scores are served, nothing is scored. */
  execution?: OnlineExecutionClient;
  /** The trace service (execution's GetTrace) the scorers read generation spans with; none: generations are not scored. */
  traces?: TraceClient;
  workers: { concurrency: number; ackWaitMs: number } | false;
  /** The counter every rule change moves (domain/org-cache.ts), shared with the review module. */
  rulesGeneration: Generation;
  /** How long a score is kept after it was stored (ONLINE_SCORE_RETENTION_DAYS); default 90 days. */
  scoreRetentionMs?: number;
}

export async function createOnlineModule(deps: OnlineModuleDeps) {
  await ensureOnlineIndexes(deps.store);
  const collections = onlineCollections(deps.store);
  const cache = createRuleCache(collections, deps.rulesGeneration, deps.logger);
  const rules = createOnlineRules(collections, deps.access, deps.now, cache.changed);
  const scores = createOnlineScores(collections, deps.access);
  const scoring = deps.workers && deps.execution ? { ...deps.workers, execution: deps.execution } : undefined;
  const intake = scoring && createIntake({ bus: deps.bus, logger: deps.logger, rules: cache });
  const scorers =
    scoring &&
    createOnlineScorers({
      ...deps,
      execution: scoring.execution,
      concurrency: scoring.concurrency,
      ackWaitMs: scoring.ackWaitMs,
    });
  const retentionMs = deps.scoreRetentionMs ?? DEFAULT_SCORE_RETENTION_MS;
  const sweeper = startSweeper({
    logger: deps.logger,
    what: "online scores",
    sweep: () => sweepScores(collections, new Date(deps.now().getTime() - retentionMs)),
  });
  return {
    register: (router: ConnectRouter) => registerOnlineRpc(router, { rules, scores }),
    async start() {
      await scorers?.start();
      await intake?.start();
    },
    async close(graceMs?: number) {
      await intake?.stop();
      await scorers?.stop(graceMs);
      await sweeper.stop();
    },
  };
}

/**
 * The scorers alone, for a process that takes scoring jobs beside the evaluation service's own
 * (an `evaluation-worker`): the ONLINE_SCORES work queue is shared by every process that runs them.
 */
export function createOnlineScorers(deps: {
  store: Store;
  bus: Bus;
  logger: Logger;
  execution: OnlineExecutionClient;
  traces?: TraceClient;
  concurrency: number;
  ackWaitMs: number;
  now?: () => Date;
}) {
  return createScorers({
    bus: deps.bus,
    logger: deps.logger,
    collections: onlineCollections(deps.store),
    execution: deps.execution,
    generation: deps.traces && generationReader(deps.traces),
    concurrency: deps.concurrency,
    // A judge call may take a while: the job stays ours while it is worked on (working()).
    ackWaitMs: Math.max(deps.ackWaitMs, 30_000),
    now: deps.now ?? (() => new Date()),
  });
}
