/**
 * Budgets in the execution process (docs/budgets.md): the store, the gate where runs start (it
 * reads the usage ledger's period documents, never per run), the threshold alerts and the RPC.
 */
import type { ConnectRouter } from "@connectrpc/connect";
import type { IdentityAuth } from "@kiln/kit/authorizer";
import type { Bus } from "@kiln/kit/bus";
import type { Logger } from "@kiln/kit/logger";
import type { Store } from "@kiln/kit/store";
import type { LedgerLock } from "../usage/ledger-lock.js";
import { readPeriods, scopeFieldOf, usageCollections } from "../usage/usage-store.js";
import { createBudgetAlerts } from "./budget-alerts.js";
import { createBudgetGate } from "./budget-gate.js";
import { registerBudgetRpc } from "./budget-rpc.js";
import { budgetCollections, ensureBudgetIndexes } from "./budget-store.js";
import { createBudgets } from "./budgets.js";

export async function createBudgetParts(deps: {
  store: Store;
  bus: Bus;
  logger: Logger;
  identityAuth: IdentityAuth;
  ledgerLock?: LedgerLock;
}) {
  await ensureBudgetIndexes(deps.store);
  const collections = budgetCollections(deps.store);
  // What budgets spend is what the usage ledger counted (usage-store.ts), read by period document.
  const ledgerPeriods = usageCollections(deps.store).periods;
  const alerts = await createBudgetAlerts({ ...deps, collections });
  const gate = createBudgetGate({
    lock: deps.ledgerLock,
    budgetsOf: (organizationId) => collections.budgets.find({ organizationId }, { limit: 1_000 }),
    async ledgerSpendOf(organizationId, periods, scopes) {
      const docs = await readPeriods(ledgerPeriods, organizationId, periods);
      const spend = new Map<string, Map<string, number>>(periods.map((p) => [p, new Map()]));
      for (const doc of docs) {
        const costs = spend.get(doc.period);
        for (const scope of scopes) costs?.set(scope, doc.scopes?.[scopeFieldOf(scope)]?.costUsd ?? 0);
      }
      return spend;
    },
    onThreshold: (budget, period, threshold, spent) => alerts.reached(budget, period, threshold, spent),
  });
  const budgets = createBudgets({
    budgets: collections.budgets,
    identityAuth: deps.identityAuth,
    gate,
    async ledgerCostOf(organizationId, period, scope) {
      const [doc] = await readPeriods(ledgerPeriods, organizationId, [period]);
      return doc?.scopes?.[scopeFieldOf(scope)]?.costUsd ?? 0;
    },
    now: () => new Date(),
  });
  return {
    gate,
    register: (router: ConnectRouter) => registerBudgetRpc(router, budgets),
    stop: () => alerts.stop(),
  };
}
