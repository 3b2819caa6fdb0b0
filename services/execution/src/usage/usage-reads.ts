/** GET /api/usage (docs/usage.md): the ledger's day rows of an organization, grouped and summed. */
import type { IdentityAuth } from "@kiln/kit/authorizer";
import { invalidArgument } from "@kiln/kit/errors";
import type { CallContext } from "../runs/call-context.js";
import { addCounters, type UsageCounters, type UsageKey, zeroCounters } from "./usage-rows.js";
import { readPeriods, type UsagePeriodDoc } from "./usage-store.js";

export const USAGE_GROUPS = ["day", "model", "apiKey", "prompt", "skill", "agent", "connection"] as const;
export type UsageGroup = (typeof USAGE_GROUPS)[number];

/** The key fields each grouping keeps; the others are "" in its rows. */
const FIELDS_OF: Record<UsageGroup, (keyof UsageKey)[]> = {
  day: ["day"],
  model: ["model", "provider"],
  apiKey: ["apiKeyId"],
  prompt: ["promptId", "promptVersionId"],
  skill: ["skillId", "skillVersionId"],
  agent: ["agentId", "agentVersionId"],
  connection: ["connectionId", "provider"],
};

/** The longest range one request reads: a year of day documents. */
export const MAX_USAGE_DAYS = 366;

export interface UsageRequest {
  organizationId: string;
  from: string;
  to: string;
  groupBy: string;
}

export type UsageRow = UsageKey & UsageCounters;

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const dayMs = (day: string) => (DAY.test(day) ? Date.parse(`${day}T00:00:00Z`) : Number.NaN);

/** The days from..to (inclusive), or a 400 naming the field that is wrong. */
export function daysOf(from: string, to: string): string[] {
  const fromMs = dayMs(from);
  const toMs = dayMs(to);
  if (Number.isNaN(fromMs))
    throw invalidArgument("from must be a date YYYY-MM-DD", [{ field: "from", issue: "must be a date YYYY-MM-DD" }]);
  if (Number.isNaN(toMs))
    throw invalidArgument("to must be a date YYYY-MM-DD", [{ field: "to", issue: "must be a date YYYY-MM-DD" }]);
  const count = (toMs - fromMs) / 86_400_000 + 1;
  if (count < 1) throw invalidArgument("to is before from", [{ field: "to", issue: "must not be before from" }]);
  if (count > MAX_USAGE_DAYS) {
    throw invalidArgument(`at most ${MAX_USAGE_DAYS} days at once`, [
      { field: "to", issue: `must be at most ${MAX_USAGE_DAYS} days after from` },
    ]);
  }
  return Array.from({ length: count }, (_, i) => new Date(fromMs + i * 86_400_000).toISOString().slice(0, 10));
}

const emptyKey = (): UsageKey => ({
  day: "",
  apiKeyId: "",
  promptId: "",
  promptVersionId: "",
  skillId: "",
  skillVersionId: "",
  agentId: "",
  agentVersionId: "",
  model: "",
  provider: "",
  connectionId: "",
});

/** The day documents' rows grouped by `group` (in key order) and their totals. */
export function groupUsage(days: UsagePeriodDoc[], group: UsageGroup): { rows: UsageRow[]; totals: UsageCounters } {
  const fields = FIELDS_OF[group];
  const rows = new Map<string, UsageRow>();
  const totals = zeroCounters();
  for (const doc of days) {
    for (const row of Object.values(doc.rows ?? {})) {
      const key = emptyKey();
      for (const f of fields) key[f] = f === "day" ? doc.period : row.key[f];
      const id = JSON.stringify(fields.map((f) => key[f]));
      const into = rows.get(id) ?? { ...key, ...zeroCounters() };
      rows.set(id, addCounters(into, row) as UsageRow);
      addCounters(totals, row);
    }
  }
  const sorted = [...rows.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, r]) => r);
  return { rows: sorted, totals };
}

export async function readUsage(
  deps: { identityAuth: IdentityAuth; periods: Parameters<typeof readPeriods>[0] },
  req: UsageRequest,
  ctx: CallContext,
) {
  if (req.organizationId === "")
    throw invalidArgument("organizationId is required", [{ field: "organizationId", issue: "is required" }]);
  const group = (req.groupBy || "day") as UsageGroup;
  if (!USAGE_GROUPS.includes(group)) {
    throw invalidArgument(`groupBy must be one of ${USAGE_GROUPS.join(", ")}`, [
      { field: "groupBy", issue: `must be one of ${USAGE_GROUPS.join(", ")}` },
    ]);
  }
  // Who may read the organization's runs may read what they used.
  await deps.identityAuth.authorize(
    ctx.principal,
    { organizationId: req.organizationId, requireAi: true, scope: "runs:read" },
    ctx.requestId,
  );
  const days = daysOf(req.from, req.to);
  return groupUsage(await readPeriods(deps.periods, req.organizationId, days), group);
}
