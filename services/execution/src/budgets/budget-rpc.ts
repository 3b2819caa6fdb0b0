/** The BudgetService of the execution process (docs/budgets.md). */
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ConnectRouter } from "@connectrpc/connect";
import { withPrincipal } from "@kiln/kit/principal";
import { BudgetService } from "@kiln/proto/budgets";
import type { BudgetInput, Budgets, BudgetView } from "./budgets.js";

export const budgetToProto = (b: BudgetView) => ({
  id: b._id,
  organizationId: b.organizationId,
  name: b.name,
  scope: b.scope,
  limitUsd: b.limitUsd,
  period: b.period,
  action: b.action,
  alertAt: b.alertAt,
  createdAt: timestampFromDate(b.createdAt),
  updatedAt: timestampFromDate(b.updatedAt),
  spentUsd: b.spentUsd,
  periodStart: timestampFromDate(b.periodStart),
  periodEnd: timestampFromDate(b.periodEnd),
});

const answer = (b: BudgetView) => ({ budget: budgetToProto(b) });

export function registerBudgetRpc(router: ConnectRouter, budgets: Budgets): void {
  router.service(BudgetService, {
    createBudget: withPrincipal(async (p, req) =>
      answer(
        await budgets.create(p, {
          organizationId: req.organizationId,
          name: req.name,
          scope: { type: req.scope?.type ?? "", id: req.scope?.id ?? "" },
          limitUsd: req.limitUsd,
          period: req.period,
          action: req.action,
          alertAt: req.alertAt?.values,
        }),
      ),
    ),
    getBudget: withPrincipal(async (p, req) => answer(await budgets.get(p, req.id))),
    listBudgets: withPrincipal(async (p, req) => {
      const page = await budgets.list(p, req);
      return { budgets: page.items.map(budgetToProto), nextCursor: page.nextCursor };
    }),
    updateBudget: withPrincipal(async (p, req) => {
      const change: Partial<BudgetInput> = {};
      if (req.name !== undefined) change.name = req.name;
      if (req.limitUsd !== undefined) change.limitUsd = req.limitUsd;
      if (req.period !== undefined) change.period = req.period;
      if (req.action !== undefined) change.action = req.action;
      if (req.alertAt) change.alertAt = req.alertAt.values;
      return answer(await budgets.update(p, req.id, change));
    }),
    deleteBudget: withPrincipal(async (p, req) => answer(await budgets.delete(p, req.id))),
  });
}
