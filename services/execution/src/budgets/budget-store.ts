/**
 * Budgets as stored (docs/budgets.md) and the UTC periods they count over. A budget is an
 * organization's limit on the spend of one scope (the organization, an API key, a prompt or a
 * connection) per day or month; `budget_alerts` holds one document per budget, period and
 * threshold reached, so that a threshold is announced once per period whichever replica sees it.
 */
import type { Collection, Store } from "@kiln/kit/store";

export const SCOPE_TYPES = ["organization", "api_key", "prompt", "connection"] as const;
export type ScopeType = (typeof SCOPE_TYPES)[number];
export const PERIODS = ["day", "month"] as const;
export type BudgetPeriod = (typeof PERIODS)[number];
export const ACTIONS = ["block", "alert"] as const;
export type BudgetAction = (typeof ACTIONS)[number];

export interface BudgetDoc {
  _id: string;
  organizationId: string;
  name: string;
  scope: { type: ScopeType; id: string };
  limitUsd: number;
  period: BudgetPeriod;
  action: BudgetAction;
  /** Fractions of limitUsd, ascending, at which budget.threshold_reached is sent. */
  alertAt: number[];
  createdAt: Date;
  updatedAt: Date;
}

/** A threshold reached: `_id` "<budgetId>|<period name>|<threshold>", inserted once. */
export interface BudgetAlertDoc {
  _id: string;
  organizationId: string;
  createdAt: Date;
}

export interface BudgetCollections {
  budgets: Collection<BudgetDoc>;
  alerts: Collection<BudgetAlertDoc>;
}

export function budgetCollections(store: Store): BudgetCollections {
  return {
    budgets: store.collection<BudgetDoc>("budgets"),
    alerts: store.collection<BudgetAlertDoc>("budget_alerts"),
  };
}

/** Alerts are kept longer than the longest period (a month) they dedupe. */
const ALERT_RETENTION_SECONDS = 40 * 24 * 3600;

export async function ensureBudgetIndexes(store: Store): Promise<void> {
  await store.ensureIndexes("budgets", [{ keys: { organizationId: 1, _id: -1 } }]);
  await store.ensureIndexes("budget_alerts", [{ keys: { createdAt: 1 }, expireAfterSeconds: ALERT_RETENTION_SECONDS }]);
}

/** The ledger's name of a budget's scope ("organization", "api_key:<id>", ...: usage-rows.ts scopesOf). */
export const ledgerScopeOf = (scope: BudgetDoc["scope"]): string =>
  scope.type === "organization" ? "organization" : `${scope.type}:${scope.id}`;

/** The run about to start, as the gate sees its scopes. */
export interface BudgetedRun {
  organizationId: string;
  apiKeyId?: string;
  /** A prompt run's prompt and its model's connection (none: a skill's steps may use several). */
  promptId?: string;
  connectionId?: string;
}

/** The ledger scopes a run's cost adds to (usage-rows.ts scopesOf). */
export function runScopes(run: BudgetedRun): string[] {
  const scopes = ["organization"];
  if (run.apiKeyId) scopes.push(`api_key:${run.apiKeyId}`);
  if (run.promptId) scopes.push(`prompt:${run.promptId}`);
  if (run.connectionId) scopes.push(`connection:${run.connectionId}`);
  return scopes;
}

export interface Period {
  name: string;
  start: Date;
  end: Date;
}

/** The last day's periods: every run asks, and the answer changes once a day. */
let memo: { dayIndex: number; day: Period; month: Period } | undefined;

/** The UTC period of `at`: its ledger name ("YYYY-MM-DD" or "YYYY-MM"), start and end. */
export function periodOf(period: BudgetPeriod, at: Date): Period {
  const dayIndex = Math.floor(at.getTime() / 86_400_000);
  if (memo?.dayIndex !== dayIndex) {
    const y = at.getUTCFullYear();
    const m = at.getUTCMonth();
    const d = at.getUTCDate();
    memo = {
      dayIndex,
      day: {
        name: at.toISOString().slice(0, 10),
        start: new Date(Date.UTC(y, m, d)),
        end: new Date(Date.UTC(y, m, d + 1)),
      },
      month: {
        name: at.toISOString().slice(0, 7),
        start: new Date(Date.UTC(y, m, 1)),
        end: new Date(Date.UTC(y, m + 1, 1)),
      },
    };
  }
  return period === "month" ? memo.month : memo.day;
}
