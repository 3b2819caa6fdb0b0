/** What a budget may say (docs/budgets.md): each wrong field is a 400 naming it. Pure: no I/O. */
import { type FieldIssue, invalidArgument } from "@kiln/kit/errors";
import { isId } from "@kiln/kit/ids";
import {
  ACTIONS,
  type BudgetAction,
  type BudgetDoc,
  type BudgetPeriod,
  PERIODS,
  SCOPE_TYPES,
  type ScopeType,
} from "./budget-store.js";

export type BudgetFields = Pick<BudgetDoc, "name" | "scope" | "limitUsd" | "period" | "action" | "alertAt">;

/** The thresholds a budget gets when it names none. */
export const DEFAULT_ALERT_AT = [0.5, 0.8, 1];
/** The largest limit: a typo's extra digits are refused rather than meaning no limit. */
export const MAX_LIMIT_USD = 10_000_000;

const ID_PREFIX: Record<Exclude<ScopeType, "organization">, "key" | "prm" | "pcn"> = {
  api_key: "key",
  prompt: "prm",
  connection: "pcn",
};

/** The input as it came (proto strings and numbers), checked and completed, or a 400 listing every issue. */
export function checkedBudget(input: {
  name: string;
  scope: { type: string; id: string };
  limitUsd: number;
  period: string;
  action: string;
  alertAt: number[] | undefined;
}): BudgetFields {
  const issues: FieldIssue[] = [];
  const name = input.name.trim();
  if (name === "" || name.length > 100) issues.push({ field: "name", issue: "must be 1 to 100 characters" });
  const type = input.scope.type as ScopeType;
  if (!SCOPE_TYPES.includes(type)) {
    issues.push({ field: "scope.type", issue: `must be one of ${SCOPE_TYPES.join(", ")}` });
  } else if (type !== "organization") {
    const field = type === "api_key" ? "apiKeyId" : type === "prompt" ? "promptId" : "connectionId";
    if (!isId(input.scope.id, ID_PREFIX[type]))
      issues.push({ field: `scope.${field}`, issue: `must be an id ${ID_PREFIX[type]}_…` });
  }
  if (!Number.isFinite(input.limitUsd) || input.limitUsd <= 0 || input.limitUsd > MAX_LIMIT_USD)
    issues.push({ field: "limitUsd", issue: `must be a number above 0 and at most ${MAX_LIMIT_USD}` });
  if (!PERIODS.includes(input.period as BudgetPeriod))
    issues.push({ field: "period", issue: `must be one of ${PERIODS.join(", ")}` });
  if (!ACTIONS.includes(input.action as BudgetAction))
    issues.push({ field: "action", issue: `must be one of ${ACTIONS.join(", ")}` });
  const alertAt = input.alertAt ?? DEFAULT_ALERT_AT;
  if (alertAt.length > 10 || alertAt.some((t) => !Number.isFinite(t) || t <= 0 || t > 1))
    issues.push({ field: "alertAt", issue: "must be at most 10 fractions above 0 and at most 1" });
  if (issues.length > 0) throw invalidArgument(issues.map((i) => `${i.field} ${i.issue}`).join("; "), issues);
  return {
    name,
    scope: { type, id: type === "organization" ? "" : input.scope.id },
    limitUsd: input.limitUsd,
    period: input.period as BudgetPeriod,
    action: input.action as BudgetAction,
    alertAt: [...new Set(alertAt)].sort((a, b) => a - b),
  };
}
