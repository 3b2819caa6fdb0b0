/**
 * The model routes' settings in one process (docs/providers.md "Routes"): when a target's circuit
 * breaker opens and for how long, and how long a route read by runs may be stale.
 */
import { parseEnv, Type } from "@kiln/kit/config";

export const ModelRoutesEnv = {
  /** Consecutive transient failures of a target (per organization and model) that open its breaker. */
  ROUTE_BREAKER_FAILURES: Type.Integer({ minimum: 1, maximum: 1_000, default: 5 }),
  /** How long an open breaker skips its target before one probe call. */
  ROUTE_BREAKER_OPEN_MS: Type.Integer({ minimum: 0, maximum: 3_600_000, default: 30_000 }),
  /** How long a route read by runs is kept; another process's change is seen within it. */
  ROUTE_CACHE_TTL_MS: Type.Integer({ minimum: 0, maximum: 600_000, default: 5_000 }),
};

export interface ModelRoutesConfig {
  breakerFailures: number;
  breakerOpenMs: number;
  cacheTtlMs: number;
}

export function loadModelRoutesConfig(env: Record<string, string | undefined> = process.env): ModelRoutesConfig {
  const vars = parseEnv(Type.Object(ModelRoutesEnv), env);
  return {
    breakerFailures: vars.ROUTE_BREAKER_FAILURES,
    breakerOpenMs: vars.ROUTE_BREAKER_OPEN_MS,
    cacheTtlMs: vars.ROUTE_CACHE_TTL_MS,
  };
}
