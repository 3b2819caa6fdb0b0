import { BusEnv, parseEnv, ServiceEnv, Type } from "@kiln/kit/config";
import { type HttpAllowlist, parseHostPatterns } from "./domain/tool-config.js";

export const CatalogEnv = Type.Object({
  ...ServiceEnv,
  ...BusEnv,
  PORT: Type.Integer({ minimum: 0, maximum: 65_535, default: 7002 }),
  MONGODB_DATABASE: Type.String({ minLength: 1, default: "kiln_catalog" }),
  IDENTITY_URL: Type.String({ minLength: 1 }),
  /**
   * Hosts `http` tools may call, comma-separated: `api.example.com` (that host) or `*.example.com`
   * (its subdomains). Empty: no `http` tool can be saved.
   */
  HTTP_TOOL_ALLOWED_HOSTS: Type.String({ default: "" }),
  /** Optional narrowing per organization, JSON: `{"org_…": ["api.example.com"]}`. */
  HTTP_TOOL_ALLOWED_HOSTS_BY_ORG: Type.String({ default: "" }),
  /** How long a replica reuses a prompt's or skill's live version for runs (0: off); see service.ts. */
  RESOLVE_CACHE_TTL_MS: Type.Integer({ minimum: 0, maximum: 60_000, default: 1_000 }),
});

export type CatalogConfig = ReturnType<typeof loadConfig>;

/** The only reader of the environment in the catalog service. */
export function loadConfig(env: Record<string, string | undefined> = process.env) {
  return parseEnv(CatalogEnv, env);
}

/** The `http` tool allowlist the configuration describes; throws on a malformed pattern or map. */
export function httpAllowlistOf(
  config: Pick<CatalogConfig, "HTTP_TOOL_ALLOWED_HOSTS" | "HTTP_TOOL_ALLOWED_HOSTS_BY_ORG">,
): HttpAllowlist {
  const hosts = parseHostPatterns(config.HTTP_TOOL_ALLOWED_HOSTS);
  if (config.HTTP_TOOL_ALLOWED_HOSTS_BY_ORG.trim() === "") return { hosts };
  let parsed: unknown;
  try {
    parsed = JSON.parse(config.HTTP_TOOL_ALLOWED_HOSTS_BY_ORG);
  } catch {
    throw new Error("invalid configuration: HTTP_TOOL_ALLOWED_HOSTS_BY_ORG is not JSON");
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new Error(
      'invalid configuration: HTTP_TOOL_ALLOWED_HOSTS_BY_ORG must be {"<organizationId>": ["host", ...]}',
    );
  }
  const byOrganization = new Map<string, string[]>();
  for (const [organizationId, patterns] of Object.entries(parsed)) {
    if (!Array.isArray(patterns) || !patterns.every((p) => typeof p === "string")) {
      throw new Error(
        `invalid configuration: HTTP_TOOL_ALLOWED_HOSTS_BY_ORG["${organizationId}"] must be a list of hosts`,
      );
    }
    byOrganization.set(
      organizationId,
      patterns.flatMap((p: string) => parseHostPatterns(p)),
    );
  }
  return { hosts, byOrganization };
}
