import { BusEnv, parseEnv, serviceEnv, Type } from "@kiln/kit/config";
import { HostAllowlistEnv, hostAllowlistOf } from "@kiln/kit/outbound/host-config";
import type { HttpAllowlist } from "./domain/tool-config.js";

export const CatalogEnv = Type.Object({
  ...serviceEnv({ port: 7002, database: "kiln_catalog" }),
  ...BusEnv,
  IDENTITY_URL: Type.String({ minLength: 1 }),
  /** An import's evaluation cases (bundles/run-import.ts). */
  EVALUATION_URL: Type.String({ minLength: 1 }),
  /** The models a promptfoo import's providers land on (bundles/run-import.ts). */
  EXECUTION_URL: Type.String({ minLength: 1 }),
  ...HostAllowlistEnv,
  /** How long a replica reuses a prompt's or skill's live version for runs (0: off); see service.ts. */
  RESOLVE_CACHE_TTL_MS: Type.Integer({ minimum: 0, maximum: 60_000, default: 1_000 }),
});

export type CatalogConfig = ReturnType<typeof loadConfig>;

/** The only reader of the environment in the catalog service. */
export function loadConfig(env: Record<string, string | undefined> = process.env) {
  return parseEnv(CatalogEnv, env);
}

/** The `http` tool allowlist the configuration describes; throws naming the variable and entry at fault. */
export function httpAllowlistOf(
  config: Pick<CatalogConfig, "HTTP_TOOL_ALLOWED_HOSTS" | "HTTP_TOOL_ALLOWED_HOSTS_BY_ORG">,
): HttpAllowlist {
  return hostAllowlistOf(config);
}
