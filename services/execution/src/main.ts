import { runServiceProcess } from "@kiln/kit/rpc/run-service";
import { configuredProviders, loadConfig } from "./config.js";
import { createExecutionService } from "./service.js";

const config = loadConfig();
await runServiceProcess("execution", config, ({ logger, store, bus, tokens, identity }) => {
  if (!bus || !identity) throw new Error("execution needs NATS_URL and IDENTITY_URL");
  return createExecutionService({
    logger,
    store,
    bus,
    tokens,
    identityAuth: identity.auth,
    configuredProviders: configuredProviders(config),
  });
});
