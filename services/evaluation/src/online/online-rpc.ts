/** kiln.evaluation.v1.OnlineEvaluationService: the online rules and scores as messages. */
import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ConnectRouter } from "@connectrpc/connect";
import { withPrincipal } from "@kiln/kit/principal";
import { OnlineEvaluationService, type OnlineRuleSchema, type OnlineScoreSchema } from "@kiln/proto/online";
import type { AssertionResult } from "../domain/assertions.js";
import { usageToMessage } from "../domain/usage.js";
import { assertionToProto, assertionValueOf } from "../rpc/case-conversions.js";
import type { OnlineRuleDoc, OnlineScoreDoc } from "./online-store.js";
import type { OnlineRules } from "./rules.js";
import type { OnlineScores } from "./scores.js";

export function ruleToProto(r: OnlineRuleDoc): MessageInitShape<typeof OnlineRuleSchema> {
  return {
    id: r._id,
    organizationId: r.organizationId,
    name: r.name,
    target: { kind: r.target.kind, id: r.target.id, label: r.target.label, filter: r.target.filter ?? undefined },
    sampleRate: r.sampleRate,
    assertions: r.assertions.map(assertionToProto),
    enabled: r.enabled,
    createdBy: r.createdBy,
    createdAt: timestampFromDate(r.createdAt),
    updatedAt: timestampFromDate(r.updatedAt),
  };
}

export function scoreToProto(s: OnlineScoreDoc): MessageInitShape<typeof OnlineScoreSchema> {
  return {
    id: s._id,
    organizationId: s.organizationId,
    ruleId: s.ruleId,
    targetType: s.targetType,
    runId: s.runId,
    traceId: s.traceId,
    spanId: s.spanId,
    promptId: s.promptId,
    skillId: s.skillId,
    agentId: s.agentId,
    versionId: s.versionId,
    label: s.label,
    passed: s.passed,
    score: s.score ?? undefined,
    assertions: JSON.parse(s.assertionsJson) as AssertionResult[],
    judgeRuns: s.judgeRuns.map((j) => ({
      runId: j.runId,
      usage: usageToMessage(j.usage),
      estimatedCostUsd: j.estimatedCostUsd ?? undefined,
    })),
    judgeCostUsd: s.judgeCostUsd ?? undefined,
    runCostUsd: s.runCostUsd ?? undefined,
    createdAt: timestampFromDate(s.createdAt),
    occurredAt: timestampFromDate(s.occurredAt),
  };
}

const dateOf = (t: Parameters<typeof timestampDate>[0] | undefined) => (t ? timestampDate(t) : undefined);
const rule = (r: OnlineRuleDoc) => ({ rule: ruleToProto(r) });

export interface OnlineEvaluation {
  rules: OnlineRules;
  scores: OnlineScores;
}

export function registerOnlineRpc(router: ConnectRouter, o: OnlineEvaluation): void {
  router.service(OnlineEvaluationService, {
    createOnlineRule: withPrincipal(async (p, req) =>
      rule(
        await o.rules.create(p, {
          organizationId: req.organizationId,
          name: req.name,
          target: req.target && {
            kind: req.target.kind,
            id: req.target.id,
            label: req.target.label,
            filter: req.target.filter,
          },
          sampleRate: req.sampleRate,
          assertions: req.assertions.map(assertionValueOf),
          enabled: req.enabled,
        }),
      ),
    ),
    listOnlineRules: withPrincipal(async (p, req) => {
      const page = await o.rules.list(p, req);
      return { rules: page.items.map(ruleToProto), nextCursor: page.nextCursor };
    }),
    getOnlineRule: withPrincipal(async (p, req) => rule(await o.rules.get(p, req.id))),
    updateOnlineRule: withPrincipal(async (p, req) =>
      rule(
        await o.rules.update(p, {
          id: req.id,
          name: req.name,
          sampleRate: req.sampleRate,
          enabled: req.enabled,
          assertions: req.setAssertions ? req.assertions.map(assertionValueOf) : undefined,
        }),
      ),
    ),
    deleteOnlineRule: withPrincipal(async (p, req) => rule(await o.rules.delete(p, req.id))),
    listOnlineScores: withPrincipal(async (p, req) => {
      const page = await o.scores.list(p, { ...req, from: dateOf(req.from), to: dateOf(req.to) });
      return { scores: page.items.map(scoreToProto), nextCursor: page.nextCursor };
    }),
    summarizeOnlineScores: withPrincipal(async (p, req) => {
      const buckets = await o.scores.summarize(p, { ...req, from: dateOf(req.from), to: dateOf(req.to) });
      return {
        buckets: buckets.map((b) => ({
          ...b,
          start: timestampFromDate(b.start),
          meanScore: b.meanScore ?? undefined,
        })),
      };
    }),
  });
}
