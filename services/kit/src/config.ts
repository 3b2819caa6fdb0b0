import Type, { type Static, type TObject } from "typebox";
import Value from "typebox/value";

export { Type };

/**
 * Reads the variables a schema names from `env`, converts their text to the declared types
 * ("false" is false, "8080" is 8080), fills defaults and validates. Throws one error listing
 * every bad variable; secret values never appear in it.
 */
export function parseEnv<S extends TObject>(schema: S, env: Record<string, string | undefined>): Static<S> {
  const picked: Record<string, string> = {};
  for (const key of Object.keys(schema.properties)) {
    const value = env[key];
    if (value !== undefined && value !== "") picked[key] = value;
  }
  const value = Value.Default(schema, Value.Convert(schema, picked));
  const problems = [...Value.Errors(schema, value)].map((e) => {
    const name = e.instancePath.replace(/^\//, "");
    if (e.keyword === "required") {
      const missing = (e.params as { requiredProperties?: string[] }).requiredProperties ?? [];
      return missing.map((m) => `${m} is required`).join("; ");
    }
    return `${name} ${e.message}`;
  });
  if (problems.length > 0) throw new Error(`invalid configuration: ${problems.join("; ")}`);
  return value as Static<S>;
}

/** The variables every service process reads. */
export const ServiceEnv = {
  HOST: Type.String({ default: "0.0.0.0" }),
  LOG_LEVEL: Type.Union(
    ["fatal", "error", "warn", "info", "debug", "trace", "silent"].map((l) => Type.Literal(l)),
    { default: "info" },
  ),
  /** Connection string of the service's MongoDB database. */
  MONGODB_URL: Type.String({ minLength: 1 }),
  /** HMAC secret of internal tokens, shared by the gateway and every service; at least 32 characters. */
  INTERNAL_AUTH_SECRET: Type.String({ minLength: 32 }),
  /** Grace period for in-flight work on SIGTERM. */
  SHUTDOWN_GRACE_MS: Type.Integer({ minimum: 0, default: 20_000 }),
};

/** The variables of a service that uses the bus. */
export const BusEnv = {
  NATS_URL: Type.String({ minLength: 1 }),
};
