import Type from "typebox";
import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { listPage, pageOf, textFiltersOf, timeFilterOf } from "../http/list-page.js";
import { answers, listAnswers, operations } from "../http/operation.js";
import { byId, rpcOptions } from "../http/request.js";
import { Body, errorResponses, IdempotencyHeaders, ListQuery, OneOf, ref } from "../schemas.js";
import { Id, IdParams, OrganizationId, organizationOf } from "./catalog-requests.js";
import {
  assertionMessages,
  OnlineRuleView,
  OnlineScoreSummaryView,
  OnlineScoreView,
  OnlineTargetView,
  onlineRuleView,
  onlineScoreView,
  RuleAssertions,
  SampleRate,
  scoreBucketView,
  targetMessage,
} from "./online-views.js";

const op = operations({ tags: ["online-evaluation"], stability: "beta" });
const Name = Type.String({ minLength: 1, maxLength: 200 });
const When = Type.String({
  maxLength: 40,
  description: "ISO-8601; scores of runs completed from (inclusive) / to (exclusive)",
});

/** What the scores list and the summary filter on. */
const ScoreFilters = {
  organizationId: Type.Optional(OrganizationId),
  ruleId: Type.Optional(Id),
  promptId: Type.Optional(Id),
  skillId: Type.Optional(Id),
  agentId: Type.Optional(Id),
  label: Type.Optional(Type.String({ maxLength: 40 })),
  from: Type.Optional(When),
  to: Type.Optional(When),
};

/** Online evaluation (docs/observability.md "Online evaluation"): sampling rules and their scores. */
export function registerOnlineRoutes(app: GatewayApp, deps: GatewayDeps): void {
  const { online } = deps.clients;

  app.post(
    "/api/online-rules",
    op("createOnlineRule", "Create a rule that scores a sampled share of production runs or generations", {
      headers: IdempotencyHeaders,
      body: Body({
        organizationId: Type.Optional(OrganizationId),
        name: Name,
        target: ref(OnlineTargetView),
        sampleRate: SampleRate,
        assertions: RuleAssertions,
        enabled: Type.Optional(Type.Boolean({ description: "default true" })),
      }),
      response: { 201: ref(OnlineRuleView), ...errorResponses(400, 401, 403, 404) },
    }),
    async (request, reply) => {
      const b = request.body;
      const r = await online.createOnlineRule(
        {
          organizationId: organizationOf(request, b.organizationId),
          name: b.name,
          target: targetMessage(b.target),
          sampleRate: b.sampleRate,
          assertions: assertionMessages(b.assertions),
          enabled: b.enabled,
        },
        rpcOptions(request),
      );
      return reply.code(201).send(onlineRuleView(r.rule));
    },
  );

  app.get(
    "/api/online-rules",
    op("listOnlineRules", "An organization's online evaluation rules, newest first", {
      querystring: Type.Object({ organizationId: Type.Optional(OrganizationId), ...ListQuery }),
      response: listAnswers(OnlineRuleView, 400, 401, 403, 404),
    }),
    async (request) => {
      const q = request.query;
      const r = await online.listOnlineRules(
        { organizationId: organizationOf(request, q.organizationId), ...pageOf(q) },
        rpcOptions(request),
      );
      return listPage(r.rules, onlineRuleView, r.nextCursor);
    },
  );

  app.get(
    "/api/online-rules/:id",
    op("getOnlineRule", "An online evaluation rule", {
      params: IdParams,
      response: answers(OnlineRuleView, 401, 403, 404),
    }),
    byId(online.getOnlineRule, (r) => onlineRuleView(r.rule)),
  );

  app.patch(
    "/api/online-rules/:id",
    op("updateOnlineRule", "Rename, enable or disable a rule, change its sample rate or replace its assertions", {
      params: IdParams,
      body: Body({
        name: Type.Optional(Name),
        sampleRate: Type.Optional(SampleRate),
        enabled: Type.Optional(Type.Boolean()),
        assertions: Type.Optional(RuleAssertions),
      }),
      response: answers(OnlineRuleView, 400, 401, 403, 404),
    }),
    async (request) => {
      const b = request.body;
      const r = await online.updateOnlineRule(
        {
          id: request.params.id,
          name: b.name,
          sampleRate: b.sampleRate,
          enabled: b.enabled,
          setAssertions: b.assertions !== undefined,
          assertions: b.assertions ? assertionMessages(b.assertions) : [],
        },
        rpcOptions(request),
      );
      return onlineRuleView(r.rule);
    },
  );

  app.delete(
    "/api/online-rules/:id",
    op("deleteOnlineRule", "Delete a rule (its scores stay); answers it as it was", {
      params: IdParams,
      response: answers(OnlineRuleView, 401, 403, 404),
    }),
    byId(online.deleteOnlineRule, (r) => onlineRuleView(r.rule)),
  );

  app.get(
    "/api/scores",
    op(
      "listOnlineScores",
      "Online scores, newest first, filtered by rule, run, trace, target, version, label, verdict, time",
      {
        querystring: Type.Object(
          {
            ...ScoreFilters,
            runId: Type.Optional(Id),
            traceId: Type.Optional(Id),
            versionId: Type.Optional(Id),
            passed: Type.Optional(OneOf(["true", "false"])),
            ...ListQuery,
          },
          { additionalProperties: false },
        ),
        response: listAnswers(OnlineScoreView, 400, 401, 403, 404),
      },
    ),
    async (request) => {
      const q = request.query;
      const r = await online.listOnlineScores(
        {
          organizationId: organizationOf(request, q.organizationId),
          ...textFiltersOf(q, "ruleId", "runId", "traceId", "promptId", "skillId", "agentId", "versionId", "label"),
          passed: q.passed === undefined ? undefined : q.passed === "true",
          from: timeFilterOf("from", q.from),
          to: timeFilterOf("to", q.to),
          ...pageOf(q),
        },
        rpcOptions(request),
      );
      return listPage(r.scores, onlineScoreView, r.nextCursor);
    },
  );

  app.get(
    "/api/scores/summary",
    op(
      "summarizeOnlineScores",
      "Online scores per time bucket, version and label: count, pass rate, mean judge score, cost",
      {
        querystring: Type.Object(
          { ...ScoreFilters, bucket: Type.Optional(OneOf(["hour", "day"])) },
          { additionalProperties: false },
        ),
        response: answers(OnlineScoreSummaryView, 400, 401, 403, 404),
      },
    ),
    async (request) => {
      const q = request.query;
      const bucket = q.bucket ?? "day";
      const r = await online.summarizeOnlineScores(
        {
          organizationId: organizationOf(request, q.organizationId),
          ...textFiltersOf(q, "ruleId", "promptId", "skillId", "agentId", "label"),
          from: timeFilterOf("from", q.from),
          to: timeFilterOf("to", q.to),
          bucket,
        },
        rpcOptions(request),
      );
      return { bucket, buckets: r.buckets.map(scoreBucketView) };
    },
  );
}
