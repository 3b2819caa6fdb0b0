import { createLogger } from "@kiln/kit/logger";
import { buildEmbedded, type EmbeddedOptions } from "@kiln/launcher/embedded";

export type EmbeddedKiln = Awaited<ReturnType<typeof buildEmbedded>>;

/** The embedded platform (in-memory store, in-process bus, built-in issuer) on a free loopback port. */
export async function startEmbedded(
  options: Partial<EmbeddedOptions> = {},
): Promise<{ kiln: EmbeddedKiln; baseUrl: string }> {
  const kiln = await buildEmbedded({ logger: createLogger({ name: "test", level: "silent" }), ...options });
  const baseUrl = await kiln.gateway.app.listen({ host: "127.0.0.1", port: 0 });
  return { kiln, baseUrl };
}
