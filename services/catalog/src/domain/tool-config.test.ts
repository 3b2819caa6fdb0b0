import { DomainError } from "@kiln/kit/errors";
import { hostAllowlistOf } from "@kiln/kit/outbound/host-config";
import { describe, expect, it } from "vitest";
import { Issues } from "./issues.js";
import type { JsonValue } from "./json-schema.js";
import { checkToolConfig, type ToolType } from "./tool-config.js";

// The patterns' own forms are tested once, in kit/src/outbound/host-patterns.test.ts.
const allowlist = hostAllowlistOf({
  HTTP_TOOL_ALLOWED_HOSTS: "api.example.com, *.weather.test 127.1 bücher.example",
  HTTP_TOOL_ALLOWED_HOSTS_BY_ORG: '{"org_narrow": ["eu.weather.test"]}',
});

function configIssues(type: ToolType, config: JsonValue, organizationId = "org_a") {
  const issues = new Issues();
  checkToolConfig(issues, "config", type, config, { allowlist, organizationId });
  try {
    issues.throwIfAny();
    return [];
  } catch (e) {
    if (!(e instanceof DomainError)) throw e;
    return e.details;
  }
}

describe("checkToolConfig", () => {
  it("accepts a manual_stub result object", () => {
    expect(configIssues("manual_stub", { result: { city: "Oslo" } })).toEqual([]);
  });

  it("refuses a manual_stub without a result object or with unknown keys", () => {
    expect(configIssues("manual_stub", {})).toEqual([{ field: "config.result", issue: "is required" }]);
    expect(configIssues("manual_stub", { result: [1] })).toEqual([
      { field: "config.result", issue: "must be an object" },
    ]);
    expect(configIssues("manual_stub", { result: {}, url: "x" })).toEqual([
      { field: "config.url", issue: "is not a setting of manual_stub tools" },
    ]);
    expect(configIssues("manual_stub", "text")).toEqual([{ field: "config", issue: "must be an object" }]);
  });

  it("accepts an http tool on an allowlisted host", () => {
    const config = {
      url: "https://eu.weather.test/v1?q=1",
      method: "POST",
      headers: { "X-Key": "k" },
      timeoutMs: 10_000,
    };
    expect(configIssues("http", config)).toEqual([]);
    expect(configIssues("http", { url: "http://127.0.0.1:8080/x", method: "GET" })).toEqual([]);
    expect(configIssues("http", { url: "https://xn--bcher-kva.example./", method: "GET" })).toEqual([]);
  });

  it("refuses hosts off the allowlist, for the deployment and for a narrowed organization", () => {
    expect(configIssues("http", { url: "https://evil.test/", method: "GET" })).toEqual([
      { field: "config.url", issue: 'host "evil.test" is not on the allowlist of this deployment' },
    ]);
    expect(configIssues("http", { url: "https://us.weather.test/", method: "GET" }, "org_narrow")).toEqual([
      { field: "config.url", issue: 'host "us.weather.test" is not on the allowlist of this deployment' },
    ]);
  });

  it("refuses bad URLs, methods, headers, timeouts and unknown keys", () => {
    expect(configIssues("http", { url: "ftp://api.example.com/", method: "GET" })).toEqual([
      { field: "config.url", issue: "must use http or https" },
    ]);
    expect(configIssues("http", { url: "https://u:p@api.example.com/", method: "GET" })).toEqual([
      { field: "config.url", issue: "must not contain credentials" },
    ]);
    expect(configIssues("http", { url: "/relative", method: "GET" })).toEqual([
      { field: "config.url", issue: "must be an absolute http or https URL" },
    ]);
    expect(
      configIssues("http", {
        url: "https://api.example.com/",
        method: "PUT",
        headers: { "bad header": "x", Host: "y", "X-N": 1 },
        timeoutMs: 10_001,
        retries: 3,
      }),
    ).toEqual([
      { field: "config.retries", issue: "is not a setting of http tools" },
      { field: "config.method", issue: "must be one of GET, POST" },
      { field: "config.headers.bad header", issue: "is not a valid header name" },
      { field: "config.headers.Host", issue: "is set by the HTTP client and cannot be configured" },
      { field: "config.headers.X-N", issue: "must be a string" },
      { field: "config.timeoutMs", issue: "must be an integer from 1 to 10000" },
    ]);
    expect(configIssues("http", {})).toEqual([
      { field: "config.url", issue: "is required" },
      { field: "config.method", issue: "is required" },
    ]);
  });
});
