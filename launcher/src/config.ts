import { ReviewEnv } from "@kiln/evaluation/config";
import { RunLimitsEnv, RunTracesEnv } from "@kiln/execution/config";
import { CorsEnv } from "@kiln/gateway/config";
import { FreePlanEnv } from "@kiln/identity/config";
import { parseEnv, portEnv, Type } from "@kiln/kit/config";
import { WebhookPrivateHostsEnv } from "@kiln/kit/outbound/host-config";
import { parseSecretKeys, SecretKeyError, type SecretKeys } from "@kiln/kit/secret-box";

export const EmbeddedEnv = Type.Object({
  ...RunTracesEnv,
  ...RunLimitsEnv,
  HOST: Type.String({ default: "127.0.0.1" }),
  PORT: portEnv(8080),
  /**
   * The port of every service's RPC (Connect, gRPC and gRPC-Web over h2c, reflection, health: as each
   * service's own port in the distributed mode); "off" serves none, 0 picks a free one.
   */
  RPC_PORT: Type.Union([Type.Integer({ minimum: 0, maximum: 65_535 }), Type.Literal("off")], { default: 7080 }),
  /** Where the RPC port listens; default HOST. */
  RPC_HOST: Type.String({ default: "" }),
  /**
   * Signs and checks the internal tokens (as in the distributed mode, so `kiln internal-token` signs
   * tokens this process accepts); default the data directory's own secret, which nothing outside knows.
   */
  INTERNAL_AUTH_SECRET: Type.Optional(Type.String({ minLength: 32 })),
  LOG_LEVEL: Type.String({ default: "info" }),
  RATE_LIMIT_PER_MINUTE: Type.Integer({ minimum: 0, default: 6_000 }),
  ...CorsEnv,
  /** Where the embedded platform keeps its data (relative to the working directory); ":memory:" keeps none. */
  KILN_DATA_DIR: Type.String({ minLength: 1, default: ".kiln" }),
  /**
   * When an acknowledged write reaches the disk: "interval" flushes the store's log within 100 ms
   * (MongoDB's default journal interval; a crash of the process loses nothing, a crash of the machine
   * at most those milliseconds), "commit" before each acknowledgement.
   */
  KILN_DATA_SYNC: Type.Union([Type.Literal("interval"), Type.Literal("commit")], { default: "interval" }),
  /** Hosts webhook URLs may resolve to private or loopback addresses for (host patterns). */
  ...WebhookPrivateHostsEnv,
  /** Hosts provider connections' base URLs may resolve to private or loopback addresses for (host patterns). */
  PROVIDER_PRIVATE_HOSTS: Type.String({ default: "" }),
  /** Seals webhook signing secrets at rest (32 bytes, base64 or hex); default: `secret.key` in KILN_DATA_DIR, made on the first start. */
  KILN_SECRET_KEY: Type.String({ default: "" }),
  /** Keys KILN_SECRET_KEY replaced, comma-separated (docs/operations.md "Secret key"). */
  KILN_SECRET_KEY_PREVIOUS: Type.String({ default: "" }),
  /** Days a webhook delivery is kept after it was made or last redelivered. */
  WEBHOOK_DELIVERY_RETENTION_DAYS: Type.Integer({ minimum: 1, maximum: 3_650, default: 30 }),
  /** Days an online evaluation score is kept after it was stored. */
  ONLINE_SCORE_RETENTION_DAYS: Type.Integer({ minimum: 1, maximum: 3_650, default: 90 }),
  /** Human review's lease and auto-add settling time, as the evaluation process reads them. */
  ...ReviewEnv,
  /** The Free plan's runs a month for new organizations, as the identity process reads it. */
  ...FreePlanEnv,
  /** The built console served at /; default: console/dist of the checkout (or console/ beside the image's dist/). */
  CONSOLE_DIR: Type.String({ default: "" }),
});

/**
 * The embedded mode's own variables; the model provider and tool variables are read by the
 * execution service's loaders (OPENAI_API_KEY, DEFAULT_MODEL, HTTP_TOOL_ALLOWED_HOSTS, …).
 */
export function loadEmbeddedConfig(env: Record<string, string | undefined> = process.env) {
  return parseEnv(EmbeddedEnv, env);
}

/**
 * KILN_SECRET_KEY and KILN_SECRET_KEY_PREVIOUS when the key is set (undefined: the data directory's
 * own key). A malformed key ends the process with a message naming the variable, never its value.
 */
export function embeddedSecretKeys(config: {
  KILN_SECRET_KEY: string;
  KILN_SECRET_KEY_PREVIOUS: string;
}): SecretKeys | undefined {
  if (config.KILN_SECRET_KEY === "") {
    if (config.KILN_SECRET_KEY_PREVIOUS !== "")
      throw new SecretKeyError("KILN_SECRET_KEY_PREVIOUS is set without KILN_SECRET_KEY");
    return undefined;
  }
  return parseSecretKeys(config.KILN_SECRET_KEY, config.KILN_SECRET_KEY_PREVIOUS);
}
