import { runServiceProcess } from "@kiln/kit/rpc/run-service";
import { loadConfig } from "./config.js";
import { createEvaluationService } from "./service.js";

const config = loadConfig();
await runServiceProcess("evaluation", config, ({ logger, store, bus, tokens, identity }) => {
  if (!bus || !identity) throw new Error("evaluation needs NATS_URL and IDENTITY_URL");
  return createEvaluationService({ logger, store, bus, tokens, identityAuth: identity.auth });
});
