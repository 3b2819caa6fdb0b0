import { BusEnv, parseEnv, ServiceEnv, Type } from "@kiln/kit/config";

const { MONGODB_URL: _m, ...Common } = ServiceEnv;

/** CORS (docs/openai-compatible.md "CORS"): the origins browsers may call from; empty: off. */
export const CorsEnv = {
  /** Comma-separated origins such as `https://app.example.com,http://localhost:5173`. */
  CORS_ORIGINS: Type.String({ default: "" }),
};

/** CORS_ORIGINS as a list of origins; a value that is not an origin (`scheme://host[:port]`) is an error. */
export function corsOriginsOf(text: string): string[] {
  const origins = text
    .split(",")
    .map((o) => o.trim())
    .filter((o) => o !== "");
  for (const origin of origins) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(origin);
    } catch {
      parsed = undefined;
    }
    if (!parsed || parsed.origin !== origin) {
      throw new Error(
        `invalid configuration: CORS_ORIGINS holds "${origin}", not an origin such as https://app.example.com`,
      );
    }
  }
  return origins;
}

export const GatewayEnv = Type.Object({
  ...Common,
  PORT: Type.Integer({ minimum: 0, maximum: 65_535, default: 8080 }),
  IDENTITY_URL: Type.String({ minLength: 1 }),
  CATALOG_URL: Type.String({ minLength: 1 }),
  EXECUTION_URL: Type.String({ minLength: 1 }),
  EVALUATION_URL: Type.String({ minLength: 1 }),
  /** Serve sign-up, token and JWKS routes and accept the built-in issuer's tokens. */
  BUILTIN_ISSUER_ENABLED: Type.Boolean({ default: true }),
  /** An external OIDC issuer whose access tokens are accepted: all three or none. */
  OIDC_ISSUER: Type.Optional(Type.String({ minLength: 1 })),
  OIDC_AUDIENCE: Type.Optional(Type.String({ minLength: 1 })),
  OIDC_JWKS_URL: Type.Optional(Type.String({ minLength: 1 })),
  /** How long a verified API key is reused before identity is asked again (revocation delay). */
  API_KEY_CACHE_TTL_MS: Type.Integer({ minimum: 0, maximum: 60_000, default: 5_000 }),
  /** Deadline of calls to the execution service (runs, previews); other services get 30 s. */
  RUN_TIMEOUT_MS: Type.Integer({ minimum: 1_000, maximum: 3_600_000, default: 600_000 }),
  /** Requests per minute per principal (per client address before authentication), per replica; 0 disables. */
  RATE_LIMIT_PER_MINUTE: Type.Integer({ minimum: 0, default: 6_000 }),
  /** The built console served at / (docs/console.md); empty: the API only. The image sets it. */
  CONSOLE_DIR: Type.String({ default: "" }),
  ...CorsEnv,
  /** The bus the MCP endpoint listens to for the catalog's changes (docs/mcp.md); unset: no list-changed notifications. */
  NATS_URL: Type.Optional(Type.String({ minLength: 1 })),
  NATS_PREFIX: BusEnv.NATS_PREFIX,
});

export type GatewayConfig = ReturnType<typeof loadConfig>;

/** The only reader of the environment in the gateway. */
export function loadConfig(env: Record<string, string | undefined> = process.env) {
  const config = parseEnv(GatewayEnv, env);
  const oidc = [config.OIDC_ISSUER, config.OIDC_AUDIENCE, config.OIDC_JWKS_URL];
  if (oidc.some(Boolean) && !oidc.every(Boolean)) {
    throw new Error("invalid configuration: set OIDC_ISSUER, OIDC_AUDIENCE and OIDC_JWKS_URL together");
  }
  if (!config.BUILTIN_ISSUER_ENABLED && !config.OIDC_ISSUER) {
    throw new Error("invalid configuration: with BUILTIN_ISSUER_ENABLED=false an OIDC issuer is required");
  }
  corsOriginsOf(config.CORS_ORIGINS);
  return config;
}

export function oidcOf(config: GatewayConfig) {
  return config.OIDC_ISSUER && config.OIDC_AUDIENCE && config.OIDC_JWKS_URL
    ? { issuer: config.OIDC_ISSUER, audience: config.OIDC_AUDIENCE, jwksUrl: config.OIDC_JWKS_URL }
    : undefined;
}
