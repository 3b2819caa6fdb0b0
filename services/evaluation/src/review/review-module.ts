/**
 * Human review (docs/review.md), hosted by the evaluation process beside the EvaluationService:
 * the ReviewService RPCs and the auto-add rules' consumer.
 */
import type { ConnectRouter } from "@connectrpc/connect";
import type { Bus } from "@kiln/kit/bus";
import type { Generation } from "@kiln/kit/bus/generation";
import type { Logger } from "@kiln/kit/logger";
import type { Store } from "@kiln/kit/store";
import type { Access } from "../access.js";
import type { Cases } from "../cases.js";
import { autoAddQueues, startAutoAdd } from "./auto-add.js";
import type { TargetReader } from "./auto-add-targets.js";
import { createContentReader, type RunReader, type TraceReader } from "./item-content.js";
import { createItems, DEFAULT_LEASE_MS } from "./items.js";
import { createQueues } from "./queues.js";
import { createMessageRenderer, type PromptReader } from "./rendered-messages.js";
import { registerReviewRpc } from "./review-rpc.js";
import { ensureReviewIndexes, reviewCollections } from "./review-store.js";
import { createTransitions } from "./transitions.js";

export interface ReviewOptions {
  /** How long a claimed item stays with its reviewer; default 10 minutes. */
  leaseMs?: number;
}

export interface ReviewModuleDeps {
  store: Store;
  bus: Bus;
  logger: Logger;
  access: Access;
  cases: Cases;
  runs: RunReader;
  traces: TraceReader;
  prompts: PromptReader;
  /** The catalog, where an auto-add rule's target is checked. */
  targets: TargetReader;
  now: () => Date;
  /** The counter every rule change moves (domain/org-cache.ts), shared with online evaluation. */
  rulesGeneration: Generation;
  options?: ReviewOptions;
}

export async function createReviewModule(deps: ReviewModuleDeps) {
  await ensureReviewIndexes(deps.store);
  const collections = reviewCollections(deps.store);
  const ruleQueues = autoAddQueues(collections, deps.rulesGeneration, deps.logger);
  const queues = createQueues({
    collections,
    access: deps.access,
    targets: deps.targets,
    now: deps.now,
    changed: ruleQueues.changed,
  });
  const leaseMs = deps.options?.leaseMs ?? DEFAULT_LEASE_MS;
  const items = createItems({
    collections,
    transitions: createTransitions(collections, deps.now, leaseMs),
    queues,
    content: createContentReader(deps.runs, deps.traces, createMessageRenderer(deps.prompts)),
    cases: deps.cases,
    now: deps.now,
    leaseMs,
  });
  const autoAdd = startAutoAdd({
    bus: deps.bus,
    logger: deps.logger,
    queues: ruleQueues,
    items,
  });
  return {
    register: (router: ConnectRouter) => registerReviewRpc(router, { queues, items }),
    /**
     * AddQueueItems in process, for rules of this process (online evaluation): called with
     * `serviceFor("evaluation", organizationId)`, the queue's organization only.
     */
    addItems: items.addItems,
    close: () => autoAdd.stop(),
  };
}
