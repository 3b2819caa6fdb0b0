/**
 * Reading online scores: a filtered list (newest first, cursor pagination) and a summary per time
 * bucket, version and label (count, pass rate, mean judge score, judge cost, the scored runs'
 * cost). Both are scoped to one organization the caller may read evaluations of.
 */
import { invalidArgument } from "@kiln/kit/errors";
import { findPage } from "@kiln/kit/pagination";
import type { Principal } from "@kiln/kit/principal";
import type { Filter } from "@kiln/kit/store";
import { type Access, SCOPES } from "../access.js";
import type { OnlineCollections, OnlineScoreDoc } from "./online-store.js";

export interface ScoreFilters {
  organizationId: string;
  ruleId?: string;
  runId?: string;
  traceId?: string;
  promptId?: string;
  skillId?: string;
  agentId?: string;
  versionId?: string;
  label?: string;
  passed?: boolean;
  from?: Date;
  to?: Date;
}

export interface ScoreBucket {
  start: Date;
  versionId: string;
  label: string;
  count: number;
  passed: number;
  passRate: number;
  meanScore: number | null;
  judged: number;
  judgeCostUsd: number;
  runCostUsd: number;
}

/** Scores one summary reads at most: a wider window is refused, to be narrowed with from/to or a rule. */
export const MAX_SUMMARY_SCORES = 50_000;
const BUCKET_MS = { hour: 3_600_000, day: 86_400_000 } as const;
const TEXT_FILTERS = ["ruleId", "runId", "traceId", "promptId", "skillId", "agentId", "versionId", "label"] as const;

function filterOf(f: ScoreFilters): Filter {
  const filter: Record<string, unknown> = { organizationId: f.organizationId };
  for (const key of TEXT_FILTERS) if (f[key]) filter[key] = f[key];
  if (f.passed !== undefined) filter.passed = f.passed;
  if (f.from || f.to) filter.occurredAt = { ...(f.from && { $gte: f.from }), ...(f.to && { $lt: f.to }) };
  return filter;
}

export type OnlineScores = ReturnType<typeof createOnlineScores>;

export function createOnlineScores(c: OnlineCollections, access: Access) {
  async function authorize(principal: Principal, organizationId: string) {
    if (organizationId === "")
      throw invalidArgument("organizationId is required", [{ field: "organizationId", issue: "is required" }]);
    await access.onResource(principal, organizationId, SCOPES.evaluationsRead, "organization");
  }

  return {
    async list(principal: Principal, f: ScoreFilters & { limit: number; cursor: string }) {
      await authorize(principal, f.organizationId);
      return findPage(c.scores, filterOf(f), f);
    },

    async summarize(principal: Principal, f: ScoreFilters & { bucket: string }): Promise<ScoreBucket[]> {
      await authorize(principal, f.organizationId);
      const bucket = f.bucket || "day";
      if (bucket !== "hour" && bucket !== "day")
        throw invalidArgument("invalid bucket", [{ field: "bucket", issue: "must be hour or day" }]);
      const docs = await c.scores.find(filterOf(f), {
        limit: MAX_SUMMARY_SCORES + 1,
        projection: { occurredAt: 1, versionId: 1, label: 1, passed: 1, score: 1, judgeCostUsd: 1, runCostUsd: 1 },
      });
      if (docs.length > MAX_SUMMARY_SCORES) {
        throw invalidArgument(`more than ${MAX_SUMMARY_SCORES} scores to summarise`, [
          { field: "from", issue: "narrow the window (from, to) or name a rule" },
        ]);
      }
      return summarize(docs, BUCKET_MS[bucket]);
    },
  };
}

/** The scores per bucket start, version and label; oldest bucket first, then by version and label. */
export function summarize(
  docs: Pick<
    OnlineScoreDoc,
    "occurredAt" | "versionId" | "label" | "passed" | "score" | "judgeCostUsd" | "runCostUsd"
  >[],
  bucketMs: number,
): ScoreBucket[] {
  const buckets = new Map<string, ScoreBucket & { scoreSum: number }>();
  for (const d of docs) {
    const start = Math.floor(new Date(d.occurredAt).getTime() / bucketMs) * bucketMs;
    const key = `${start}\n${d.versionId}\n${d.label}`;
    let b = buckets.get(key);
    if (!b) {
      b = {
        start: new Date(start),
        versionId: d.versionId,
        label: d.label,
        count: 0,
        passed: 0,
        passRate: 0,
        meanScore: null,
        judged: 0,
        judgeCostUsd: 0,
        runCostUsd: 0,
        scoreSum: 0,
      };
      buckets.set(key, b);
    }
    b.count++;
    if (d.passed) b.passed++;
    if (d.score !== null) {
      b.judged++;
      b.scoreSum += d.score;
    }
    b.judgeCostUsd += d.judgeCostUsd ?? 0;
    b.runCostUsd += d.runCostUsd ?? 0;
  }
  return [...buckets.values()]
    .map(({ scoreSum, ...b }) => ({
      ...b,
      passRate: b.passed / b.count,
      meanScore: b.judged > 0 ? scoreSum / b.judged : null,
    }))
    .sort(
      (a, b) =>
        a.start.getTime() - b.start.getTime() ||
        a.versionId.localeCompare(b.versionId) ||
        a.label.localeCompare(b.label),
    );
}
