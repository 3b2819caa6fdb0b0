import { describe, expect, it } from "vitest";
import { httpAllowlistOf, loadConfig } from "./config.js";

const BASE = {
  MONGODB_URL: "mongodb://127.0.0.1:27017",
  INTERNAL_AUTH_SECRET: "x".repeat(32),
  NATS_URL: "nats://127.0.0.1:4222",
  IDENTITY_URL: "http://127.0.0.1:7001",
  EXECUTION_URL: "http://127.0.0.1:7003",
  EVALUATION_URL: "http://127.0.0.1:7004",
};

describe("catalog config", () => {
  it("defaults to an empty allowlist", () => {
    const config = loadConfig(BASE);
    expect(config.HTTP_TOOL_ALLOWED_HOSTS).toBe("");
    expect(httpAllowlistOf(config)).toEqual({ hosts: [] });
  });

  it("reads host patterns and the per-organization narrowing", () => {
    const config = loadConfig({
      ...BASE,
      HTTP_TOOL_ALLOWED_HOSTS: "api.example.com, *.Weather.test",
      HTTP_TOOL_ALLOWED_HOSTS_BY_ORG: '{"org_1":["eu.weather.test"]}',
    });
    expect(httpAllowlistOf(config)).toEqual({
      hosts: ["api.example.com", "*.weather.test"],
      byOrganization: new Map([["org_1", ["eu.weather.test"]]]),
    });
  });

  it("refuses malformed patterns and maps at start-up", () => {
    const of = (hosts: string, byOrg = "") =>
      httpAllowlistOf({ HTTP_TOOL_ALLOWED_HOSTS: hosts, HTTP_TOOL_ALLOWED_HOSTS_BY_ORG: byOrg });
    expect(() => of("*")).toThrow('invalid configuration: HTTP_TOOL_ALLOWED_HOSTS: "*" is not a host pattern');
    expect(() => of("a.com", "{")).toThrow(/HTTP_TOOL_ALLOWED_HOSTS_BY_ORG is not JSON/);
    expect(() => of("a.com", '["a.com"]')).toThrow(/must be/);
    expect(() => of("a.com", '{"org_1":"a.com"}')).toThrow(/must be a list of host patterns/);
  });
});
