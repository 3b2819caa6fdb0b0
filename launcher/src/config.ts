import { parseEnv, Type } from "@kiln/kit/config";
import { WebhookPrivateHostsEnv } from "@kiln/kit/outbound/host-config";

export const EmbeddedEnv = Type.Object({
  HOST: Type.String({ default: "127.0.0.1" }),
  PORT: Type.Integer({ minimum: 0, maximum: 65_535, default: 8080 }),
  LOG_LEVEL: Type.String({ default: "info" }),
  RATE_LIMIT_PER_MINUTE: Type.Integer({ minimum: 0, default: 6_000 }),
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
