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
  const value = Value.Default(schema, Value.Convert(schema, picked)) as Record<string, unknown>;
  // One verdict per variable: validating the whole object would stop after typebox's first 8
  // errors and report a union of literals once per member.
  const required = new Set(schema.required ?? []);
  const problems: string[] = [];
  for (const [name, property] of Object.entries(schema.properties)) {
    if (value[name] === undefined) {
      if (required.has(name)) problems.push(`${name} is required`);
      continue;
    }
    const [first] = Value.Errors(property, value[name]);
    if (first) problems.push(`${name} ${problemOf(property, first.message)}`);
  }
  if (problems.length > 0) throw new Error(`invalid configuration: ${problems.join("; ")}`);
  return value as Static<S>;
}

/** "must be one of a, b" for a union of literals (never the value itself, which may be a secret). */
function problemOf(property: unknown, message: string): string {
  const members = (property as { anyOf?: { const?: unknown }[] }).anyOf;
  const allowed = members?.map((m) => m.const);
  if (allowed?.length && allowed.every((a) => typeof a === "string")) return `must be one of ${allowed.join(", ")}`;
  return message;
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

/** A listening port variable, `port` by default. */
export const portEnv = (port: number) => Type.Integer({ minimum: 0, maximum: 65_535, default: port });

/** The variables every service process reads, with the port it listens on and the database it uses by default. */
export function serviceEnv(defaults: { port: number; database: string }) {
  return {
    ...ServiceEnv,
    PORT: portEnv(defaults.port),
    MONGODB_DATABASE: Type.String({ minLength: 1, default: defaults.database }),
  };
}

/** The variables of a service that uses the bus. */
export const BusEnv = {
  NATS_URL: Type.String({ minLength: 1 }),
  /** Namespace of this platform's streams and subjects on a NATS shared with another platform; default none. */
  NATS_PREFIX: Type.Optional(Type.String({ pattern: "^[A-Za-z0-9-]{1,32}$" })),
  /** Copies JetStream keeps of each stream the services create: 3 on a 3-node cluster. */
  NATS_STREAM_REPLICAS: Type.Integer({ minimum: 1, maximum: 5, default: 1 }),
};
