import { runServiceProcess } from "@kiln/kit/rpc/run-service";
import { httpAllowlistOf, loadConfig } from "./config.js";
import { createCatalogService } from "./service.js";

const config = loadConfig();
const httpAllowlist = httpAllowlistOf(config);
await runServiceProcess("catalog", config, ({ logger, store, bus, tokens, identity }) => {
  if (!bus || !identity) throw new Error("catalog needs NATS_URL and IDENTITY_URL");
  return createCatalogService({
    logger,
    store,
    bus,
    tokens,
    identityAuth: identity.auth,
    httpAllowlist,
    resolveCacheTtlMs: config.RESOLVE_CACHE_TTL_MS,
  });
});
