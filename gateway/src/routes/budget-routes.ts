import Type from "typebox";
import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { listPage, pageOf } from "../http/list-page.js";
import { answers, listAnswers, operations } from "../http/operation.js";
import { rpcOptions } from "../http/request.js";
import { Body, errorResponses, ListQuery, ref } from "../schemas.js";
import {
  AlertAt,
  BudgetAction,
  BudgetName,
  BudgetPeriod,
  BudgetScope,
  BudgetView,
  budgetView,
  LimitUsd,
  scopeOf,
} from "./budget-views.js";
import { IdParams, OrganizationId, organizationOf } from "./catalog-requests.js";

const op = operations({ tags: ["budgets"], stability: "beta" });

/** Budgets (docs/budgets.md; issue #49): spend limits per day or month that block runs or alert. */
export function registerBudgetRoutes(app: GatewayApp, deps: GatewayDeps): void {
  const { budgets } = deps.clients;

  app.post(
    "/api/budgets",
    op("createBudget", "Create a budget: a spend limit on the organization, an API key, a prompt or a connection", {
      body: Body({
        organizationId: Type.Optional(OrganizationId),
        name: BudgetName,
        scope: BudgetScope,
        limitUsd: LimitUsd,
        period: BudgetPeriod,
        action: BudgetAction,
        alertAt: Type.Optional(AlertAt),
      }),
      response: { 201: ref(BudgetView), ...errorResponses(400, 401, 403, 404, 409) },
    }),
    async (request, reply) => {
      const b = request.body;
      const r = await budgets.createBudget(
        {
          organizationId: organizationOf(request, b.organizationId),
          name: b.name,
          scope: scopeOf(b.scope),
          limitUsd: b.limitUsd,
          period: b.period,
          action: b.action,
          ...(b.alertAt ? { alertAt: { values: b.alertAt } } : {}),
        },
        rpcOptions(request),
      );
      return reply.code(201).send(budgetView(r.budget));
    },
  );

  app.get(
    "/api/budgets",
    op("listBudgets", "An organization's budgets with their current period's spend, newest first", {
      querystring: Type.Object({ organizationId: Type.Optional(OrganizationId), ...ListQuery }),
      response: listAnswers(BudgetView, 400, 401, 403, 404),
    }),
    async (request) => {
      const q = request.query;
      const r = await budgets.listBudgets(
        { organizationId: organizationOf(request, q.organizationId), ...pageOf(q) },
        rpcOptions(request),
      );
      return listPage(r.budgets, budgetView, r.nextCursor);
    },
  );

  app.get(
    "/api/budgets/:id",
    op("getBudget", "A budget with its current period's spend", {
      params: IdParams,
      response: answers(BudgetView, 401, 403, 404),
    }),
    async (request) => budgetView((await budgets.getBudget({ id: request.params.id }, rpcOptions(request))).budget),
  );

  app.patch(
    "/api/budgets/:id",
    op("updateBudget", "Change a budget's name, limit, period, action or thresholds (not its scope)", {
      params: IdParams,
      body: Body({
        name: Type.Optional(BudgetName),
        limitUsd: Type.Optional(LimitUsd),
        period: Type.Optional(BudgetPeriod),
        action: Type.Optional(BudgetAction),
        alertAt: Type.Optional(AlertAt),
      }),
      response: answers(BudgetView, 400, 401, 403, 404),
    }),
    async (request) => {
      const b = request.body;
      const r = await budgets.updateBudget(
        {
          id: request.params.id,
          name: b.name,
          limitUsd: b.limitUsd,
          period: b.period,
          action: b.action,
          ...(b.alertAt ? { alertAt: { values: b.alertAt } } : {}),
        },
        rpcOptions(request),
      );
      return budgetView(r.budget);
    },
  );

  app.delete(
    "/api/budgets/:id",
    op("deleteBudget", "Delete a budget; answers it as it was. Runs of its scope are no longer limited by it", {
      params: IdParams,
      response: answers(BudgetView, 401, 403, 404),
    }),
    async (request) => budgetView((await budgets.deleteBudget({ id: request.params.id }, rpcOptions(request))).budget),
  );
}
