import { describe, expect, it } from "vitest";
import { parseEnv, ServiceEnv, serviceEnv, Type } from "./config.js";

const TestEnv = Type.Object({
  ...ServiceEnv,
  PORT: Type.Integer({ minimum: 0, maximum: 65_535, default: 7000 }),
  FEATURE_ENABLED: Type.Boolean({ default: true }),
  RATIO: Type.Number({ default: 0.5 }),
  API_TOKEN: Type.Optional(Type.String({ minLength: 1 })),
});

const SECRET = "a-secret-of-at-least-32-characters!!";

const valid = { MONGODB_URL: "mongodb://localhost:27017", INTERNAL_AUTH_SECRET: SECRET };

/** The message of what `fn` throws. */
function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
  throw new Error("expected an error");
}

describe("parseEnv", () => {
  it('reads "false" as false and "true" as true', () => {
    expect(parseEnv(TestEnv, { ...valid, FEATURE_ENABLED: "false" }).FEATURE_ENABLED).toBe(false);
    expect(parseEnv(TestEnv, { ...valid, FEATURE_ENABLED: "true" }).FEATURE_ENABLED).toBe(true);
  });

  it("converts numbers and integers", () => {
    const config = parseEnv(TestEnv, { ...valid, PORT: "8080", RATIO: "0.25", SHUTDOWN_GRACE_MS: "0" });
    expect(config.PORT).toBe(8080);
    expect(config.RATIO).toBe(0.25);
    expect(config.SHUTDOWN_GRACE_MS).toBe(0);
  });

  it("fills the defaults of unset and empty variables", () => {
    const config = parseEnv(TestEnv, { ...valid, PORT: "", LOG_LEVEL: undefined });
    expect(config).toEqual({
      ...valid,
      HOST: "0.0.0.0",
      LOG_LEVEL: "info",
      SHUTDOWN_GRACE_MS: 20_000,
      PORT: 7000,
      FEATURE_ENABLED: true,
      RATIO: 0.5,
    });
  });

  it("keeps an optional variable unset and takes it when given", () => {
    expect(parseEnv(TestEnv, valid).API_TOKEN).toBeUndefined();
    expect(parseEnv(TestEnv, { ...valid, API_TOKEN: "t" }).API_TOKEN).toBe("t");
  });

  it("leaves out variables the schema does not name", () => {
    const config = parseEnv(TestEnv, { ...valid, PATH: "/usr/bin", HOME: "/root" });
    expect(Object.keys(config)).not.toContain("PATH");
    expect(Object.keys(config)).not.toContain("HOME");
  });

  it("refuses a value that is not of the declared type", () => {
    expect(errorOf(() => parseEnv(TestEnv, { ...valid, FEATURE_ENABLED: "yes please" }))).toMatch(/FEATURE_ENABLED/);
    expect(errorOf(() => parseEnv(TestEnv, { ...valid, PORT: "eighty" }))).toMatch(/PORT/);
    expect(errorOf(() => parseEnv(TestEnv, { ...valid, PORT: "70000" }))).toMatch(/PORT/);
    expect(errorOf(() => parseEnv(TestEnv, { ...valid, LOG_LEVEL: "loud" }))).toMatch(/LOG_LEVEL/);
  });

  it("reports every missing and bad variable in one error", () => {
    const message = errorOf(() =>
      parseEnv(TestEnv, {
        INTERNAL_AUTH_SECRET: "too-short",
        LOG_LEVEL: "loud",
        PORT: "eighty",
        FEATURE_ENABLED: "maybe",
        RATIO: "half",
        SHUTDOWN_GRACE_MS: "-1",
      }),
    );
    expect(message).toMatch(/^invalid configuration: /);
    for (const name of [
      "MONGODB_URL",
      "INTERNAL_AUTH_SECRET",
      "LOG_LEVEL",
      "PORT",
      "FEATURE_ENABLED",
      "RATIO",
      "SHUTDOWN_GRACE_MS",
    ]) {
      expect(message).toContain(name);
    }
    expect(message).toContain("MONGODB_URL is required");
  });

  it("names each bad variable once", () => {
    const message = errorOf(() => parseEnv(TestEnv, { ...valid, LOG_LEVEL: "loud" }));
    expect(message.match(/LOG_LEVEL/g)).toHaveLength(1);
  });

  it("never echoes the value of a variable, secrets included", () => {
    const shortSecret = "hunter2-is-my-secret";
    const message = errorOf(() =>
      parseEnv(TestEnv, {
        MONGODB_URL: "mongodb://user:pa55word@db",
        INTERNAL_AUTH_SECRET: shortSecret,
        PORT: "pa55word",
      }),
    );
    expect(message).toContain("INTERNAL_AUTH_SECRET");
    expect(message).not.toContain(shortSecret);
    expect(message).not.toContain("hunter2");
    expect(message).not.toContain("pa55word");
  });
});

describe("serviceEnv", () => {
  const Env = Type.Object(serviceEnv({ port: 7009, database: "kiln_test" }));

  it("defaults the port and the database to the service's own", () => {
    const config = parseEnv(Env, valid);
    expect(config.PORT).toBe(7009);
    expect(config.MONGODB_DATABASE).toBe("kiln_test");
    expect(config.SHUTDOWN_GRACE_MS).toBe(20_000);
  });

  it("reads both from the environment", () => {
    const config = parseEnv(Env, { ...valid, PORT: "9000", MONGODB_DATABASE: "other" });
    expect(config).toMatchObject({ PORT: 9000, MONGODB_DATABASE: "other" });
    expect(errorOf(() => parseEnv(Env, { ...valid, PORT: "70000" }))).toContain("PORT");
  });
});
