/**
 * The whole platform in this process for the gateway's own tests: the embedded mode's services on
 * in-memory stores behind the gateway app, which the tests call with `app.inject()` (no port).
 * Logs nothing unless a logger is given.
 */
import { createLogger } from "@kiln/kit/logger";
import { buildEmbedded, type EmbeddedOptions } from "@kiln/launcher/embedded";

export type TestPlatform = Awaited<ReturnType<typeof buildEmbedded>>;

export function buildTestPlatform(options: Partial<EmbeddedOptions> = {}): Promise<TestPlatform> {
  return buildEmbedded({ logger: createLogger({ name: "test", level: "silent" }), ...options });
}
