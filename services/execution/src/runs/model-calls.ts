/**
 * What the model calls of one execution add up to when its model may be a route (docs/providers.md
 * "Routes"): which target answered (the execution's provider and model are its), the cost at each
 * answering target's price, and every attempt of the route's targets in order.
 */
import { type CatalogModel, type CostNote, costNotesOf, estimateCostUsd } from "@kiln/models/catalog";
import type { ModelResult, TokenUsage } from "@kiln/models/provider";
import type { ResolvedModel } from "@kiln/models/registry";
import { type RouteAttempt, RouteFailure, routedAnswerOf } from "@kiln/models/routes";
import { addUsage } from "@kiln/models/usage";

export interface RouteRecord {
  route: string;
  attempts: RouteAttempt[];
}

export function modelCalls(model: ResolvedModel) {
  const route = "route" in model ? (model as { route: { name: string } }).route.name : undefined;
  const attempts: RouteAttempt[] = [];
  let answering: CatalogModel = model.entry;
  const usageBy = new Map<CatalogModel, TokenUsage>();
  return {
    /** A call answered: by the route's target that answered, when routed. */
    answered(answer: ModelResult) {
      const routed = routedAnswerOf(answer);
      if (routed) {
        attempts.push(...routed.attempts);
        answering = routed.answered.entry;
      }
      usageBy.set(answering, addUsage(usageBy.get(answering) ?? { inputTokens: 0, outputTokens: 0 }, answer.usage));
    },
    /** A call failed: a route's attempts, and the last target tried as the execution's model. */
    failed(error: unknown) {
      if (error instanceof RouteFailure) {
        attempts.push(...error.attempts);
        if (usageBy.size === 0) answering = error.last.entry;
      }
    },
    entry: () => answering,
    /** null when a model that answered has no price; 0 when none answered. */
    costUsd(): number | null {
      if (usageBy.size === 0) return estimateCostUsd(answering.pricing, { inputTokens: 0, outputTokens: 0 });
      let cost: number | null = 0;
      for (const [entry, usage] of usageBy) {
        const part = estimateCostUsd(entry.pricing, usage);
        cost = cost === null || part === null ? null : cost + part;
      }
      return cost;
    },
    /** What the estimate assumed, over every answering target, each note once. */
    costNotes(): CostNote[] {
      return [...new Set([...usageBy].flatMap(([entry, usage]) => costNotesOf(entry.pricing, usage)))];
    },
    record: (): RouteRecord | undefined => (route ? { route, attempts } : undefined),
  };
}
