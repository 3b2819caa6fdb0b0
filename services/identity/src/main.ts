import { runServiceProcess } from "@kiln/kit/rpc/run-service";
import { loadConfig } from "./config.js";
import { createIdentityService } from "./service.js";

const config = loadConfig();
await runServiceProcess("identity", config, ({ logger, store, tokens }) =>
  createIdentityService({
    logger,
    store,
    tokens,
    issuer: {
      issuer: config.TOKEN_ISSUER,
      audience: config.TOKEN_AUDIENCE,
      ttlSeconds: config.ACCESS_TOKEN_TTL_SECONDS,
      // A PEM passed through a one-line variable may carry "\n" escapes.
      privateKeyPem: config.IDENTITY_SIGNING_KEY.replace(/\\n/g, "\n"),
    },
    freePlanMonthlyRunLimit: config.FREE_PLAN_MONTHLY_RUN_LIMIT,
    auditStream: { otlp: config.auditOtlp, webhook: config.auditWebhook },
  }),
);
