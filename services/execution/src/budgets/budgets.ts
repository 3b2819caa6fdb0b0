/**
 * An organization's budgets (docs/budgets.md): create, read, list, change and delete, each read
 * answered with the current period's spend. Reads need `runs:read` (API keys; users: members who
 * may read runs), changes `runs:write` and, for users, the owner or admin role. Every query is
 * scoped by the organization; a change drops the organization's budgets from the gate here.
 */
import { authorizeOnResource, type IdentityAuth } from "@kiln/kit/authorizer";
import { failedPrecondition, invalidArgument, notFound, permissionDenied } from "@kiln/kit/errors";
import { newId } from "@kiln/kit/ids";
import { findPage } from "@kiln/kit/pagination";
import type { Principal } from "@kiln/kit/principal";
import type { Collection } from "@kiln/kit/store";
import type { BudgetGate } from "./budget-gate.js";
import { checkedBudget } from "./budget-rules.js";
import { type BudgetDoc, ledgerScopeOf, periodOf } from "./budget-store.js";

/** Budgets an organization may have: every run of the organization looks at each. */
export const MAX_BUDGETS_PER_ORGANIZATION = 100;

export interface BudgetInput {
  name: string;
  scope: { type: string; id: string };
  limitUsd: number;
  period: string;
  action: string;
  alertAt: number[] | undefined;
}

export interface BudgetsDeps {
  budgets: Collection<BudgetDoc>;
  identityAuth: IdentityAuth;
  gate: Pick<BudgetGate, "invalidate" | "uncounted">;
  /** The ledger's flushed cost of a scope in a period ("YYYY-MM-DD" or "YYYY-MM"). */
  ledgerCostOf(organizationId: string, period: string, scope: string): Promise<number>;
  now: () => Date;
}

/** A budget with its current period and what was spent in it. */
export type BudgetView = BudgetDoc & { spentUsd: number; periodStart: Date; periodEnd: Date };

export function createBudgets(deps: BudgetsDeps) {
  const { budgets } = deps;

  async function authorize(principal: Principal, organizationId: string, write: boolean, what = "budget") {
    const decision = await authorizeOnResource(deps.identityAuth, principal, {
      organizationId,
      scope: write ? "runs:write" : "runs:read",
      what,
      requireAi: !write,
    });
    if (write && principal.type === "user" && decision.role !== "owner" && decision.role !== "admin") {
      throw permissionDenied("only organization owners and admins manage budgets");
    }
  }

  /** The budget with that id, once the caller may see it (404 otherwise, as for one that is not there). */
  async function budgetFor(principal: Principal, id: string, write: boolean): Promise<BudgetDoc> {
    const found = id === "" ? null : await budgets.findOne({ _id: id });
    if (!found) throw notFound("budget");
    await authorize(principal, found.organizationId, write);
    return found;
  }

  async function viewOf(b: BudgetDoc): Promise<BudgetView> {
    const period = periodOf(b.period, deps.now());
    const scope = ledgerScopeOf(b.scope);
    const flushed = await deps.ledgerCostOf(b.organizationId, period.name, scope);
    const spentUsd = flushed + deps.gate.uncounted(b.organizationId, period.name, scope);
    return { ...b, spentUsd, periodStart: period.start, periodEnd: period.end };
  }

  return {
    async create(principal: Principal, input: BudgetInput & { organizationId: string }): Promise<BudgetView> {
      if (input.organizationId === "")
        throw invalidArgument("organizationId is required", [{ field: "organizationId", issue: "is required" }]);
      await authorize(principal, input.organizationId, true, "organization");
      const fields = checkedBudget(input);
      if ((await budgets.countDocuments({ organizationId: input.organizationId })) >= MAX_BUDGETS_PER_ORGANIZATION) {
        throw failedPrecondition(`an organization has at most ${MAX_BUDGETS_PER_ORGANIZATION} budgets`);
      }
      const at = deps.now();
      const doc: BudgetDoc = {
        _id: newId("bdg"),
        organizationId: input.organizationId,
        ...fields,
        createdAt: at,
        updatedAt: at,
      };
      await budgets.insertOne(doc);
      deps.gate.invalidate(doc.organizationId);
      return viewOf(doc);
    },

    get: async (principal: Principal, id: string) => viewOf(await budgetFor(principal, id, false)),

    async list(principal: Principal, input: { organizationId: string; limit: number; cursor: string }) {
      if (input.organizationId === "")
        throw invalidArgument("organizationId is required", [{ field: "organizationId", issue: "is required" }]);
      await authorize(principal, input.organizationId, false, "organization");
      const page = await findPage(budgets, { organizationId: input.organizationId }, input);
      return { items: await Promise.all(page.items.map(viewOf)), nextCursor: page.nextCursor };
    },

    async update(principal: Principal, id: string, change: Partial<BudgetInput>): Promise<BudgetView> {
      const current = await budgetFor(principal, id, true);
      // The scope is what the budget is about: another scope is another budget.
      const fields = checkedBudget({
        name: change.name ?? current.name,
        scope: current.scope,
        limitUsd: change.limitUsd ?? current.limitUsd,
        period: change.period ?? current.period,
        action: change.action ?? current.action,
        alertAt: change.alertAt ?? current.alertAt,
      });
      const updated: BudgetDoc = { ...current, ...fields, updatedAt: deps.now() };
      await budgets.replaceOne({ _id: current._id, organizationId: current.organizationId }, updated);
      deps.gate.invalidate(current.organizationId);
      return viewOf(updated);
    },

    async delete(principal: Principal, id: string): Promise<BudgetView> {
      const current = await budgetFor(principal, id, true);
      await budgets.deleteOne({ _id: current._id, organizationId: current.organizationId });
      deps.gate.invalidate(current.organizationId);
      return viewOf(current);
    },
  };
}

export type Budgets = ReturnType<typeof createBudgets>;
