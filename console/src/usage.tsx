import type { Organization, UsageReport } from "@kiln/sdk";
import { useCallback, useId, useMemo, useState } from "react";
import { useLoaded } from "./action.js";
import { call, type Session, type ShownError } from "./api.js";
import { dollars } from "./model-picker.js";
import { ErrorBox, Pending, SelectField } from "./ui.js";
import { UsageBreakdown, usageQuery } from "./usage-breakdown.js";
import { Budgets } from "./usage-budgets.js";

/** The periods a person reads usage over, as `from`/`to` UTC days (both inclusive). */
const PERIODS = {
  month: "This month",
  last7: "The last 7 days",
  last30: "The last 30 days",
  lastMonth: "Last month",
} as const;
type Period = keyof typeof PERIODS;

const day = (d: Date) => d.toISOString().slice(0, 10);
const daysAgo = (n: number) => day(new Date(Date.now() - n * 86_400_000));

export function rangeOf(period: Period, now = new Date()): { from: string; to: string } {
  const first = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  if (period === "month") return { from: day(first), to: day(now) };
  if (period === "last7") return { from: daysAgo(6), to: day(now) };
  if (period === "last30") return { from: daysAgo(29), to: day(now) };
  const previous = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1));
  return { from: day(previous), to: day(new Date(first.getTime() - 86_400_000)) };
}

const count = (n: number) => new Intl.NumberFormat("en-US").format(n);

/**
 * The Usage page (docs/usage.md): the plan and how much of its monthly runs are used, what the
 * chosen period spent in runs, tokens and dollars, day by day, and by model, API key, prompt,
 * skill or agent, each table downloadable as CSV.
 */
export function Usage({ session }: { session: Session }) {
  const id = useId();
  const organizationId = session.organizationId ?? "";
  const [error, setError] = useState<ShownError | null>(null);
  const [period, setPeriod] = useState<Period>("month");
  const range = useMemo(() => rangeOf(period), [period]);
  const readPlan = useCallback(async () => {
    const [{ organization }, month] = await Promise.all([
      call<{ organization: Organization }>("GET", `/api/organizations/${organizationId}`),
      call<UsageReport>("GET", usageQuery(organizationId, rangeOf("month"), "day")),
    ]);
    return { organization, monthRuns: month.totals.runs };
  }, [organizationId]);
  const plan = useLoaded(readPlan, setError).value;
  const readDays = useCallback(
    () => call<UsageReport>("GET", usageQuery(organizationId, range, "day")),
    [organizationId, range],
  );
  const days = useLoaded(readDays, setError).value;
  if (!plan || !days) return <Pending error={error} what="usage" />;
  const limit = plan.organization.entitlements.monthlyRunLimit;
  const t = days.totals;
  return (
    <main>
      <h1>Usage</h1>
      <ErrorBox error={error} />
      <section className="card" aria-labelledby={`${id}-plan`}>
        <h2 id={`${id}-plan`}>Plan</h2>
        <p>
          {plan.organization.plan === "free" ? "Free" : plan.organization.plan} plan:{" "}
          {limit
            ? `${count(plan.monthRuns)} of ${count(limit)} runs this month`
            : `${count(plan.monthRuns)} runs this month, no limit`}
          .
        </p>
        {limit > 0 && (
          <meter
            aria-label="Runs used this month"
            min={0}
            max={limit}
            low={limit * 0.8}
            high={limit * 0.95}
            optimum={0}
            value={Math.min(plan.monthRuns, limit)}
          />
        )}
        <p className="hint">
          The run past the limit is refused (429) until the month turns (UTC); the count includes each agent's step runs
          and every judge call.
        </p>
      </section>
      <div className="usage-controls">
        <SelectField id={`${id}-period`} label="Period" value={period} onChange={(v) => setPeriod(v as Period)}>
          {Object.entries(PERIODS).map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
        </SelectField>
        <span className="hint">
          {range.from} to {range.to} (UTC)
        </span>
      </div>
      <dl className="totals" aria-label="Totals of the period">
        <div>
          <dt>Spend</dt>
          <dd>{dollars(t.costUsd)}</dd>
        </div>
        <div>
          <dt>Runs</dt>
          <dd>{count(t.runs)}</dd>
        </div>
        <div>
          <dt>Input tokens</dt>
          <dd>{count(t.inputTokens)}</dd>
          {t.cachedInputTokens > 0 && <dd className="hint">{count(t.cachedInputTokens)} from the provider's cache</dd>}
        </div>
        <div>
          <dt>Output tokens</dt>
          <dd>{count(t.outputTokens)}</dd>
          {t.reasoningTokens > 0 && <dd className="hint">{count(t.reasoningTokens)} reasoning</dd>}
        </div>
        <div>
          <dt>Response cache</dt>
          <dd>{t.runs > 0 ? `${Math.round((t.cacheHits / t.runs) * 1000) / 10}% of runs` : "no run"}</dd>
          <dd className="hint">
            {count(t.cacheHits)} answered from the cache, saving {dollars(t.savedCostUsd)}
          </dd>
        </div>
      </dl>
      <DailySpend report={days} />
      <UsageBreakdown organizationId={organizationId} range={range} onError={setError} />
      <Budgets organizationId={organizationId} />
    </main>
  );
}

/** Spend per day of the period, as bars beside their figures (the table is the data; bars are its picture). */
function DailySpend({ report }: { report: UsageReport }) {
  const most = Math.max(0, ...report.data.map((r) => r.costUsd));
  return (
    <section aria-labelledby="daily">
      <h2 id="daily">Day by day</h2>
      {report.data.length === 0 ? (
        <p className="hint">No run in this period.</p>
      ) : (
        <ul className="day-bars" aria-label="Spend per day">
          {report.data.map((r) => (
            <li key={r.day}>
              <span className="day">{r.day}</span>
              <span className="bar" style={{ width: `${most > 0 ? (r.costUsd / most) * 100 : 0}%` }} aria-hidden />
              <span className="figure">
                {dollars(r.costUsd)} · {count(r.runs)} runs
              </span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
