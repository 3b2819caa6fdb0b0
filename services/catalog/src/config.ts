import { BusEnv, parseEnv, ServiceEnv, Type } from "@kiln/kit/config";

export const CatalogEnv = Type.Object({
  ...ServiceEnv,
  ...BusEnv,
  PORT: Type.Integer({ minimum: 0, maximum: 65_535, default: 7002 }),
  MONGODB_DATABASE: Type.String({ minLength: 1, default: "kiln_catalog" }),
  IDENTITY_URL: Type.String({ minLength: 1 }),
});

/** The only reader of the environment in the catalog service. */
export function loadConfig(env: Record<string, string | undefined> = process.env) {
  return parseEnv(CatalogEnv, env);
}
