import { BusEnv, parseEnv, ServiceEnv, Type } from "@kiln/kit/config";

export const ExecutionEnv = Type.Object({
  ...ServiceEnv,
  ...BusEnv,
  PORT: Type.Integer({ minimum: 0, maximum: 65_535, default: 7003 }),
  MONGODB_DATABASE: Type.String({ minLength: 1, default: "kiln_execution" }),
  IDENTITY_URL: Type.String({ minLength: 1 }),
  OPENAI_API_KEY: Type.Optional(Type.String({ minLength: 1 })),
});

/** The only reader of the environment in the execution service. */
export function loadConfig(env: Record<string, string | undefined> = process.env) {
  return parseEnv(ExecutionEnv, env);
}

export function configuredProviders(config: ReturnType<typeof loadConfig>): string[] {
  return config.OPENAI_API_KEY ? ["openai"] : [];
}
