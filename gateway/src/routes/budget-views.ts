/** The budget views (docs/budgets.md) and their conversion from the execution service's messages. */
import type { Budget } from "@kiln/proto/budgets";
import Type from "typebox";
import { OneOf, Timestamp } from "../schemas.js";
import { answersOf, iso } from "./views.js";

export const SCOPE_TYPES = ["organization", "api_key", "prompt", "connection"] as const;
const ID_FIELD = { api_key: "apiKeyId", prompt: "promptId", connection: "connectionId" } as const;

export const BudgetScope = Type.Object(
  {
    type: OneOf(SCOPE_TYPES),
    apiKeyId: Type.Optional(Type.String({ maxLength: 100, description: 'the API key, with type "api_key"' })),
    promptId: Type.Optional(Type.String({ maxLength: 100, description: 'the prompt, with type "prompt"' })),
    connectionId: Type.Optional(
      Type.String({ maxLength: 100, description: 'the provider connection, with type "connection"' }),
    ),
  },
  {
    additionalProperties: false,
    description: "what the budget limits: the organization's runs, or one key's, prompt's or connection's",
  },
);
export const BudgetName = Type.String({ minLength: 1, maxLength: 100 });
export const LimitUsd = Type.Number({
  exclusiveMinimum: 0,
  maximum: 10_000_000,
  description: "the spend limit in USD",
});
export const BudgetPeriod = OneOf(["day", "month"], { description: "the UTC day or month the spend is summed over" });
export const BudgetAction = OneOf(["block", "alert"], {
  description: "block: runs of the scope are refused (429) once the limit is spent; alert: thresholds only",
});
export const AlertAt = Type.Array(Type.Number({ exclusiveMinimum: 0, maximum: 1 }), {
  maxItems: 10,
  description: "fractions of limitUsd that send budget.threshold_reached once per period; default [0.5, 0.8, 1]",
});

/** The proto scope of a request's: its type and the id under the type's own field. */
export function scopeOf(scope: { type: string; apiKeyId?: string; promptId?: string; connectionId?: string }) {
  const field = ID_FIELD[scope.type as keyof typeof ID_FIELD];
  return { type: scope.type, id: field ? (scope[field] ?? "") : "" };
}

export const BudgetView = Type.Object(
  {
    id: Type.String(),
    organizationId: Type.String(),
    name: Type.String(),
    scope: BudgetScope,
    limitUsd: Type.Number(),
    period: BudgetPeriod,
    action: BudgetAction,
    alertAt: Type.Array(Type.Number()),
    spentUsd: Type.Number({ description: "spent in the current period, as the ledger and this process know it" }),
    periodStart: Timestamp,
    periodEnd: Timestamp,
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: "Budget", description: "a spend limit of an organization's runs per UTC day or month" },
);

const { view } = answersOf("execution");

export const budgetView = view("budget", (b: Budget) => {
  const type = (b.scope?.type ?? "organization") as (typeof SCOPE_TYPES)[number];
  const field = ID_FIELD[type as keyof typeof ID_FIELD];
  return {
    id: b.id,
    organizationId: b.organizationId,
    name: b.name,
    scope: field ? { type, [field]: b.scope?.id ?? "" } : { type },
    limitUsd: b.limitUsd,
    period: b.period as "day" | "month",
    action: b.action as "block" | "alert",
    alertAt: b.alertAt,
    spentUsd: b.spentUsd,
    periodStart: iso(b.periodStart) ?? "",
    periodEnd: iso(b.periodEnd) ?? "",
    createdAt: iso(b.createdAt) ?? "",
    updatedAt: iso(b.updatedAt) ?? "",
  };
});
