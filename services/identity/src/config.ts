import { parseEnv, serviceEnv, Type } from "@kiln/kit/config";

export const IdentityEnv = Type.Object({
  ...serviceEnv({ port: 7001, database: "kiln_identity" }),
  /** ES256 private key (PKCS#8 PEM) of the built-in token issuer; every replica must share it. */
  IDENTITY_SIGNING_KEY: Type.String({ minLength: 1 }),
  TOKEN_ISSUER: Type.String({ minLength: 1, default: "kiln" }),
  TOKEN_AUDIENCE: Type.String({ minLength: 1, default: "kiln-api" }),
  ACCESS_TOKEN_TTL_SECONDS: Type.Integer({ minimum: 60, maximum: 86_400, default: 3_600 }),
});

export type IdentityConfig = ReturnType<typeof loadConfig>;

/** The only reader of the environment in the identity service. */
export function loadConfig(env: Record<string, string | undefined> = process.env) {
  return parseEnv(IdentityEnv, env);
}
