import { parseEnv, serviceEnv, Type } from "@kiln/kit/config";
import { AuditWebhookEnv, loadAuditOtlpConfig, loadAuditWebhookConfig } from "./audit/export-config.js";

export { loadAuditOtlpConfig };

/** The plan a new organization gets (docs/usage.md "The monthly run limit"). */
export const FreePlanEnv = {
  /** The runs a month of the Free plan a new organization gets; 0 for no limit. */
  FREE_PLAN_MONTHLY_RUN_LIMIT: Type.Integer({ minimum: 0, default: 1_000 }),
};

export const IdentityEnv = Type.Object({
  ...serviceEnv({ port: 7001, database: "kiln_identity" }),
  /** ES256 private key (PKCS#8 PEM) of the built-in token issuer; every replica must share it. */
  IDENTITY_SIGNING_KEY: Type.String({ minLength: 1 }),
  TOKEN_ISSUER: Type.String({ minLength: 1, default: "kiln" }),
  TOKEN_AUDIENCE: Type.String({ minLength: 1, default: "kiln-api" }),
  ACCESS_TOKEN_TTL_SECONDS: Type.Integer({ minimum: 60, maximum: 86_400, default: 3_600 }),
  ...FreePlanEnv,
  /** WEBHOOK_PRIVATE_HOSTS, KILN_SECRET_KEY and KILN_SECRET_KEY_PREVIOUS: the organizations' audit webhooks. */
  ...AuditWebhookEnv,
});

export type IdentityConfig = ReturnType<typeof loadConfig>;

/** The only reader of the environment in the identity service. */
export function loadConfig(env: Record<string, string | undefined> = process.env) {
  return {
    ...parseEnv(IdentityEnv, env),
    auditOtlp: loadAuditOtlpConfig(env),
    auditWebhook: loadAuditWebhookConfig(env),
  };
}
