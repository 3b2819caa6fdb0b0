/**
 * budget.threshold_reached (docs/budgets.md "Alerts"): a budget's threshold reached in a period is
 * claimed in `budget_alerts` by its key (budget, period, threshold) — the replica whose insert wins
 * announces it, every other finds the claim — then handed to the usage events' outbox: the event
 * reaches JetStream (stream USAGE_EVENTS) even if the bus is away, and webhooks deliver it.
 */
import { USAGE_EVENTS } from "@kiln/contracts/bus-names";
import type { BudgetThresholdReachedData } from "@kiln/contracts/events";
import type { Bus } from "@kiln/kit/bus";
import { createEventOutbox, type EventIntentDoc, eventStream, outboxEventOf } from "@kiln/kit/bus/outbox";
import type { Logger } from "@kiln/kit/logger";
import { isDuplicateKeyError, type Store } from "@kiln/kit/store";
import type { BudgetCollections, BudgetDoc, periodOf } from "./budget-store.js";

/** Usage events (docs/events/budget.threshold_reached.schema.json), kept a week. */
export const USAGE_EVENTS_STREAM = eventStream(USAGE_EVENTS.stream, [...USAGE_EVENTS.subjects]);

export async function createBudgetAlerts(deps: {
  store: Store;
  bus: Bus;
  logger: Logger;
  collections: BudgetCollections;
  now?: () => Date;
}) {
  const now = deps.now ?? (() => new Date());
  await deps.bus.ensureStream(USAGE_EVENTS_STREAM);
  const outbox = createEventOutbox(deps.store.collection<EventIntentDoc>("usage_event_outbox"), deps.bus, deps.logger);
  outbox.start();
  const pending = new Set<Promise<void>>();

  async function announce(b: BudgetDoc, period: ReturnType<typeof periodOf>, threshold: number, spentUsd: number) {
    const key = `${b._id}|${period.name}|${threshold}`;
    try {
      await deps.collections.alerts.insertOne({ _id: key, organizationId: b.organizationId, createdAt: now() });
    } catch (e) {
      if (isDuplicateKeyError(e)) return;
      throw e;
    }
    await outbox.add([
      outboxEventOf(USAGE_EVENTS.budget, {
        type: "budget.threshold_reached",
        sourceId: key,
        organizationId: b.organizationId,
        at: now(),
        data: {
          budgetId: b._id,
          name: b.name,
          scope: scopeView(b.scope),
          period: b.period,
          periodStart: period.start.toISOString(),
          periodEnd: period.end.toISOString(),
          action: b.action,
          limitUsd: b.limitUsd,
          threshold,
          spentUsd,
        } satisfies BudgetThresholdReachedData,
      }),
    ]);
  }

  return {
    /** Announces in the background: the run that crossed the threshold does not wait. */
    reached(b: BudgetDoc, period: ReturnType<typeof periodOf>, threshold: number, spentUsd: number): void {
      const p = announce(b, period, threshold, spentUsd).catch((err: unknown) =>
        deps.logger.warn({ err, budgetId: b._id, threshold }, "budget threshold not announced"),
      );
      pending.add(p);
      void p.finally(() => pending.delete(p));
    },
    async stop() {
      await Promise.allSettled([...pending]);
      await outbox.stop();
    },
  };
}

/** A scope as the API shows it: `{type}` and the id under its own name. */
export function scopeView(scope: BudgetDoc["scope"]): Record<string, string> {
  switch (scope.type) {
    case "api_key":
      return { type: scope.type, apiKeyId: scope.id };
    case "prompt":
      return { type: scope.type, promptId: scope.id };
    case "connection":
      return { type: scope.type, connectionId: scope.id };
    default:
      return { type: "organization" };
  }
}
