/**
 * Queues' auto-add rules (docs/review.md "Adding by rule"): a durable consumer of run.completed on
 * the RUNS stream adds a deterministic sample of the runs of a rule's prompt, skill or agent. The
 * sample is a hash of (queue id, run id), and a target is in a queue once (a unique key), so a
 * redelivered event never adds a run twice. Judge runs are never added; a skill run an evaluation
 * made is recognized by its evaluation result, looked for once `settleMs` has passed.
 */
import { createHash } from "node:crypto";
import type { Bus, BusMessage, Subscription } from "@kiln/kit/bus";
import type { Logger } from "@kiln/kit/logger";
import type { Collection } from "@kiln/kit/store";
import type { ResultDoc } from "../store/evaluation-store.js";
import type { Items } from "./items.js";
import type { QueueDoc, ReviewCollections } from "./review-store.js";

export const RULES_CONSUMER = { stream: "RUNS", durable: "annotation-queue-rules", filterSubject: "runs.completed.*" };

/** The fields of run.completed a rule reads. */
interface RunCompleted {
  runId: string;
  kind: string;
  organizationId: string;
  promptId?: string;
  promptVersionId?: string;
  skillId?: string;
  skillVersionId?: string;
  agentId?: string;
  agentVersionId?: string;
}

/** Whether run `runId` falls in a queue's sample of `rate` (0 to 1), the same answer every time. */
export function sampled(queueId: string, runId: string, rate: number): boolean {
  if (rate >= 1) return true;
  const h = createHash("sha256").update(`${queueId}:${runId}`).digest().readUInt32BE(0);
  return h / 2 ** 32 < rate;
}

export interface AutoAddDeps {
  bus: Bus;
  logger: Logger;
  collections: ReviewCollections;
  results: Collection<ResultDoc>;
  items: Items;
  /** The version a label of a prompt, skill or agent points at ("" when none). */
  labelVersion(organizationId: string, kind: string, id: string, label: string): Promise<string>;
  /** How long after a skill run completes it is checked for being an evaluation's; default 60 s. */
  settleMs?: number;
}

function ruleTarget(run: RunCompleted, kind: string): { id: string; versionId: string } {
  if (kind === "prompt") return { id: run.promptId ?? "", versionId: run.promptVersionId ?? "" };
  if (kind === "skill") return { id: run.skillId ?? "", versionId: run.skillVersionId ?? "" };
  return { id: run.agentId ?? "", versionId: run.agentVersionId ?? "" };
}

export function startAutoAdd(deps: AutoAddDeps) {
  const settleMs = deps.settleMs ?? 60_000;
  const subscriptions: Subscription[] = [];
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;

  async function matchingQueues(run: RunCompleted): Promise<QueueDoc[]> {
    const ids = [run.promptId, run.skillId, run.agentId].filter((id): id is string => !!id);
    if (ids.length === 0) return [];
    const queues = await deps.collections.queues.find({
      organizationId: run.organizationId,
      "autoAdd.id": { $in: ids },
    });
    const out: QueueDoc[] = [];
    for (const q of queues) {
      const rule = q.autoAdd;
      if (!rule) continue;
      const target = ruleTarget(run, rule.kind);
      if (target.id !== rule.id || !sampled(q._id, run.runId, rule.sampleRate)) continue;
      if (rule.label) {
        const at = await deps.labelVersion(run.organizationId, rule.kind, rule.id, rule.label);
        if (at !== target.versionId) continue;
      }
      out.push(q);
    }
    return out;
  }

  async function handle(msg: BusMessage) {
    const run = msg.json<RunCompleted>();
    if (run.kind === "judge" || !run.runId || !run.organizationId) return;
    const queues = await matchingQueues(run);
    if (queues.length === 0) return;
    if (run.kind === "skill") {
      // An evaluation's run gets its result once graded: wait, then look.
      if (msg.deliveryCount === 1) return msg.nak(settleMs);
      if (await deps.results.findOne({ runId: run.runId })) return;
    }
    for (const q of queues) await deps.items.insertTargets(q, [{ type: "run", id: run.runId }], `rule:${q._id}`);
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
