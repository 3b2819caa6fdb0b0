/**
 * What a model route may hold (docs/providers.md "Routes"): a slug name, a strategy, 1–8 targets
 * that are models this organization can run now (never routes), the retryOn kinds and an attempt
 * timeout. Every issue is named by its field path.
 */
import { type FieldIssue, invalidArgument } from "@kiln/kit/errors";
import type { ProviderRegistry } from "@kiln/models/registry";
import { RETRY_KINDS, type RetryKind, type RouteStrategy } from "@kiln/models/route-policy";
import type { ModelRouteDoc } from "./route-store.js";

export const ROUTE_PREFIX = "route/";
export const ROUTE_NAME = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;
export const MAX_TARGETS = 8;
export const MAX_WEIGHT = 1000;
export const MAX_ATTEMPT_TIMEOUT_MS = 600_000;

export interface RouteFields {
  name: string;
  strategy: string;
  targets: { model: string; weight?: number }[];
  retryOn?: readonly string[];
  attemptTimeoutMs?: number | null;
}

/**
 * The checked fields of a route, ready to store; 400 naming every bad field. `models` checks that
 * each target can run now; null leaves that out (targets already stored, unchanged).
 */
export function checkedRoute(
  input: RouteFields,
  models: ProviderRegistry | null,
): Pick<ModelRouteDoc, "name" | "strategy" | "targets" | "retryOn" | "attemptTimeoutMs"> {
  const issues: FieldIssue[] = [];
  if (!ROUTE_NAME.test(input.name)) {
    issues.push({ field: "name", issue: "must be a lower-case slug (a-z, 0-9 and -, at most 64 characters)" });
  }
  if (input.strategy !== "fallback" && input.strategy !== "weighted") {
    issues.push({ field: "strategy", issue: "must be fallback or weighted" });
  }
  issues.push(...targetIssues(input.targets, input.strategy, models));
  const retryOn = input.retryOn ?? RETRY_KINDS;
  retryOn.forEach((kind, i) => {
    if (!(RETRY_KINDS as readonly string[]).includes(kind)) {
      issues.push({ field: `retryOn[${i}]`, issue: `must be one of ${RETRY_KINDS.join(", ")}` });
    } else if (retryOn.indexOf(kind) !== i) issues.push({ field: `retryOn[${i}]`, issue: "appears twice" });
  });
  const timeout = input.attemptTimeoutMs ?? null;
  if (timeout !== null && (!Number.isInteger(timeout) || timeout < 1 || timeout > MAX_ATTEMPT_TIMEOUT_MS)) {
    issues.push({ field: "attemptTimeoutMs", issue: `must be an integer from 1 to ${MAX_ATTEMPT_TIMEOUT_MS}` });
  }
  if (issues.length > 0) throw invalidArgument("invalid model route", issues);
  return {
    name: input.name,
    strategy: input.strategy as RouteStrategy,
    targets: input.targets.map((t) =>
      t.weight !== undefined ? { model: t.model, weight: t.weight } : { model: t.model },
    ),
    retryOn: [...retryOn] as RetryKind[],
    attemptTimeoutMs: timeout,
  };
}

function targetIssues(
  targets: RouteFields["targets"],
  strategy: string,
  models: ProviderRegistry | null,
): FieldIssue[] {
  if (targets.length < 1 || targets.length > MAX_TARGETS) {
    return [{ field: "targets", issue: `must list 1 to ${MAX_TARGETS} models` }];
  }
  const issues: FieldIssue[] = [];
  targets.forEach((t, i) => {
    const field = `targets[${i}].model`;
    if (t.model.startsWith(ROUTE_PREFIX)) issues.push({ field, issue: "is a route: a route targets models only" });
    else if (targets.findIndex((o) => o.model === t.model) !== i) issues.push({ field, issue: "appears twice" });
    else if (models) {
      try {
        models.resolve(t.model || "\u0000");
      } catch {
        issues.push({ field, issue: "is not a model this organization can run (GET /api/models)" });
      }
    }
    if (t.weight !== undefined && (!Number.isInteger(t.weight) || t.weight < 0 || t.weight > MAX_WEIGHT)) {
      issues.push({ field: `targets[${i}].weight`, issue: `must be an integer from 0 to ${MAX_WEIGHT}` });
    }
  });
  if (strategy === "weighted" && issues.length === 0 && targets.every((t) => (t.weight ?? 1) === 0)) {
    issues.push({ field: "targets", issue: "a weighted route needs a target of weight above 0" });
  }
  return issues;
}
