/**
 * Which TTL a prompt run uses the response cache with, and why (docs/cache.md "Defaults"): the
 * request's Kiln-Cache header first (`no-store` turns the cache off even where a default exists),
 * else the default of the label the run went through (`production` for the published version),
 * else the version's own default, else none.
 */
import { invalidArgument } from "@kiln/kit/errors";
import { LIMITS } from "@kiln/kit/limits";

/** RunPromptRequest.cache: the request's Kiln-Cache header. */
export interface CacheDirective {
  ttlSeconds: number;
  noStore: boolean;
}

/** Where a run's TTL came from (the run's `cache.ttlSource`). */
export type TtlSource = "request" | "label" | "version";

/** How a run uses the cache: look up answers at most `ttlSeconds` old and keep new ones that long. */
export interface CachePolicy {
  ttlSeconds: number;
  source: TtlSource;
}

/** The defaults the catalog resolved with the version: its label's (when the run went through one) and its own. */
export interface CacheDefaults {
  label?: number;
  version?: number;
}

/** A 400 for a directive the gateway would not have sent (a client of the RPC itself). */
export function checkCacheDirective(directive: CacheDirective | undefined): void {
  if (!directive) return;
  const { ttlSeconds, noStore } = directive;
  if (
    !Number.isInteger(ttlSeconds) ||
    ttlSeconds < 0 ||
    ttlSeconds > LIMITS.cacheTtlSeconds ||
    (noStore && ttlSeconds > 0)
  ) {
    throw invalidArgument("invalid cache directive", [
      { field: "Kiln-Cache", issue: `must be ttl=<1 to ${LIMITS.cacheTtlSeconds} seconds> or no-store` },
    ]);
  }
}

/** A TTL the cache takes; anything else (a default stored out of bounds) counts as none. */
const usable = (ttl: number | undefined): ttl is number =>
  ttl !== undefined && Number.isInteger(ttl) && ttl >= 1 && ttl <= LIMITS.cacheTtlSeconds;

/** The run's use of the cache; undefined: it does not use it. */
export function cachePolicyOf(directive: CacheDirective | undefined, defaults: CacheDefaults): CachePolicy | undefined {
  if (directive?.noStore) return undefined;
  if (directive && usable(directive.ttlSeconds)) return { ttlSeconds: directive.ttlSeconds, source: "request" };
  if (usable(defaults.label)) return { ttlSeconds: defaults.label, source: "label" };
  if (usable(defaults.version)) return { ttlSeconds: defaults.version, source: "version" };
  return undefined;
}
