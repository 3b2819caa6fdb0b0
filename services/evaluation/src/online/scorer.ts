/**
 * The scorers: a durable consumer (`online-scorers`) on the ONLINE_SCORES work queue. A job reads
 * its rule and the run (execution's GetRun, as the evaluation service in the run's organization),
 * judges the run's output with the rule's assertions exactly as evaluation cases are judged
 * (domain/assertions.ts; llm_judge through judgeOf, each call a judge run with its cost), and
 * stores one score per (rule, target): a job delivered again finds its score and stops.
 */

import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { Client } from "@connectrpc/connect";
import { CONSUMERS } from "@kiln/contracts/bus-names";
import type { Bus, BusMessage, Subscription } from "@kiln/kit/bus";
import { newId } from "@kiln/kit/ids";
import type { Logger } from "@kiln/kit/logger";
import { actingFor } from "@kiln/kit/principal";
import { domainErrorOf } from "@kiln/kit/rpc/errors";
import { isDuplicateKeyError } from "@kiln/kit/store";
import type { ExecutionService, Run } from "@kiln/proto/execution";
import { EVALUATION_SERVICE } from "../access.js";
import { evaluateAssertions, type Judge } from "../domain/assertions.js";
import type { JudgeRun } from "../domain/report.js";
import { judgeOf } from "../work/item-execution.js";
import { ONLINE_SCORES_STREAM, type ScoredTarget, type ScoreJob } from "./jobs.js";
import type { OnlineCollections, OnlineRuleDoc, OnlineScoreDoc } from "./online-store.js";

/** The execution calls of the scorers: read the run, grade it by llm_judge. */
export type OnlineExecutionClient = Pick<Client<typeof ExecutionService>, "getRun" | "complete">;

export interface ScorerDeps {
  bus: Bus;
  logger: Logger;
  collections: OnlineCollections;
  execution: OnlineExecutionClient;
  /** Reads a generation span of a trace job; none: generation jobs are dropped. */
  generation?: (job: ScoreJob, signal: AbortSignal) => Promise<ScoredTarget | null>;
  concurrency: number;
  ackWaitMs: number;
  now: () => Date;
}

const SCORERS = { stream: ONLINE_SCORES_STREAM.name, durable: CONSUMERS.onlineScorers };

/** A run as a scorer judges it. */
export function runTarget(run: Run): ScoredTarget {
  const output = run.output ? (JSON.parse(run.output.json) as { text: string; json?: unknown }) : null;
  const completedAt = run.completedAt ? timestampDate(run.completedAt) : new Date();
  return {
    base: {
      targetKey: run.id,
      targetType: "run",
      runId: run.id,
      traceId: "",
      spanId: "",
      promptId: run.promptId,
      skillId: run.skillId,
      agentId: run.agentId,
      versionId: run.promptVersionId || run.skillVersionId || run.agentVersionId,
      label: run.label,
      runCostUsd: run.estimatedCostUsd ?? null,
      occurredAt: completedAt,
    },
    inputJson: run.input?.json ?? "{}",
    observation: {
      output: run.status === "succeeded" ? output : null,
      latencyMs: Number(run.latencyMs),
      estimatedCostUsd: run.estimatedCostUsd ?? null,
    },
  };
}

/** The judge runs' cost: null without judge runs or when one has no price. */
const judgeCostOf = (runs: JudgeRun[]) =>
  runs.length === 0 || runs.some((r) => r.estimatedCostUsd === null)
    ? null
    : runs.reduce((sum, r) => sum + (r.estimatedCostUsd ?? 0), 0);

export function createScorers(deps: ScorerDeps) {
  const c = deps.collections;
  const aborter = new AbortController();
  let subscription: Subscription | undefined;

  async function targetOf(job: ScoreJob): Promise<ScoredTarget | null> {
    if (!job.runId) return deps.generation ? deps.generation(job, aborter.signal) : null;
    try {
      const res = await deps.execution.getRun(
        { id: job.runId, kind: "" },
        { signal: aborter.signal, contextValues: actingFor(EVALUATION_SERVICE, job.organizationId) },
      );
      return res.run ? runTarget(res.run) : null;
    } catch (e) {
      // A run that no longer exists (or never did in this organization) scores nothing; anything else is retried.
      if (domainErrorOf(e)?.kind === "not_found") return null;
      throw e;
    }
  }

  async function score(rule: OnlineRuleDoc, target: ScoredTarget): Promise<OnlineScoreDoc> {
    const judgeRuns: JudgeRun[] = [];
    const grades: number[] = [];
    const judgeCall = judgeOf(
      { execution: deps.execution, signal: aborter.signal },
      rule.organizationId,
      { inputJson: target.inputJson, expectedOutputJson: null },
      judgeRuns,
    );
    const judge: Judge = async (assertion, text) => {
      const verdict = await judgeCall(assertion, text);
      grades.push(verdict.score);
      return verdict;
    };
    const results = await evaluateAssertions(rule.assertions, target.observation, judge);
    return {
      _id: newId("osc"),
      organizationId: rule.organizationId,
      ruleId: rule._id,
      ...target.base,
      passed: results.every((r) => r.passed),
      score: grades.length > 0 ? grades.reduce((a, b) => a + b, 0) / grades.length : null,
      assertionsJson: JSON.stringify(results),
      judgeRuns,
      judgeCostUsd: judgeCostOf(judgeRuns),
      createdAt: deps.now(),
    };
  }

  async function handle(msg: BusMessage): Promise<void> {
    const job = msg.json<ScoreJob>();
    const rule = await c.rules.findOne({ _id: job.ruleId });
    // A rule deleted (or of another organization: never) since the job was queued scores nothing.
    if (!rule || rule.organizationId !== job.organizationId) return;
    const targetKey = job.runId ?? `${job.traceId}:${job.spanId}`;
    const key = `${rule._id}:${targetKey}`;
    if (await c.scored.findOne({ _id: key })) return;
    const keepAlive = setInterval(() => msg.working(), Math.max(50, Math.floor(deps.ackWaitMs / 3)));
    keepAlive.unref();
    try {
      const target = await targetOf(job);
      if (!target) {
        deps.logger.warn({ ruleId: rule._id, targetKey }, "online score target not found; dropped");
        return;
      }
      const doc = await score(rule, target);
      try {
        await c.scores.insertOne(doc);
      } catch (e) {
        // Another delivery stored it first: its score stands.
        if (!isDuplicateKeyError(e)) throw e;
      }
      await c.scored.replaceOne({ _id: key }, { _id: key, createdAt: doc.createdAt }, { upsert: true });
    } finally {
      clearInterval(keepAlive);
    }
  }

  return {
    async start() {
      await deps.bus.ensureStream(ONLINE_SCORES_STREAM);
      const spec = { ...SCORERS, ackWaitMs: deps.ackWaitMs };
      await deps.bus.ensureConsumer(spec);
      subscription = deps.bus.consume(spec, handle, {
        concurrency: deps.concurrency,
        retryDelayMs: 2_000,
        onError: (err, msg) => {
          if (!aborter.signal.aborted) deps.logger.warn({ err, seq: msg.seq }, "online scoring failed; redelivered");
        },
      });
    },
    async stop(graceMs = 10_000) {
      const timer = setTimeout(() => aborter.abort(), graceMs);
      try {
        await subscription?.stop();
      } finally {
        clearTimeout(timer);
        subscription = undefined;
      }
    },
  };
}
