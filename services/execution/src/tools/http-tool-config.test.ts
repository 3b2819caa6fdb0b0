import { describe, expect, it } from "vitest";
import { parseHttpToolConfig, urlWithQuery } from "./http-tool-config.js";
import { ToolFailure } from "./tool-failure.js";

function failureOf(fn: () => unknown): ToolFailure {
  try {
    fn();
  } catch (error) {
    if (error instanceof ToolFailure) return error;
    throw error;
  }
  throw new Error("expected a ToolFailure");
}

describe("parseHttpToolConfig", () => {
  it("caps the timeout at 10 s and defaults to it", () => {
    expect(parseHttpToolConfig({ url: "https://a.test/", method: "GET", timeoutMs: 60_000 }).timeoutMs).toBe(10_000);
    expect(parseHttpToolConfig({ url: "https://a.test/", method: "GET" }).timeoutMs).toBe(10_000);
    expect(parseHttpToolConfig({ url: "https://a.test/", method: "GET", timeoutMs: 250 }).timeoutMs).toBe(250);
  });

  it("lower-cases header names", () => {
    expect(parseHttpToolConfig({ url: "https://a.test/", method: "POST", headers: { "X-Key": "v" } }).headers).toEqual({
      "x-key": "v",
    });
  });

  it("lists every problem, naming headers but never their values", () => {
    const failure = failureOf(() =>
      parseHttpToolConfig({
        url: "ftp://a.test/",
        method: "PUT",
        headers: { Host: "secret-1", "X-A": 5, "Bad Name": "secret-2", "X-B": "secret-3\n" },
        timeoutMs: 0,
      }),
    );
    expect(failure.error.code).toBe("invalid_tool_config");
    expect(failure.error.details).toEqual([
      { field: "config.url", issue: "must use http or https" },
      { field: "config.method", issue: "must be GET or POST" },
      { field: "config.headers.Host", issue: "is set by the HTTP client and cannot be configured" },
      { field: "config.headers.X-A", issue: "must be a string" },
      { field: "config.headers.Bad Name", issue: "is not a valid header name" },
      { field: "config.headers.X-B", issue: "must not contain line breaks or control characters" },
      { field: "config.timeoutMs", issue: "must be a positive integer" },
    ]);
    expect(JSON.stringify(failure.error)).not.toMatch(/secret/);
  });

  it("refuses URLs with credentials and non-URLs", () => {
    expect(failureOf(() => parseHttpToolConfig({ url: "http://u:p@a.test/", method: "GET" })).error.details).toEqual([
      { field: "config.url", issue: "must not contain credentials" },
    ]);
    expect(failureOf(() => parseHttpToolConfig({ url: "/relative", method: "GET" })).error.details).toEqual([
      { field: "config.url", issue: "must be an absolute http or https URL" },
    ]);
  });
});

describe("urlWithQuery", () => {
  it("appends scalars as text and the rest as JSON, skipping undefined", () => {
    const url = urlWithQuery(new URL("https://a.test/p?fixed=1"), {
      s: "a b&c",
      n: 1.5,
      b: false,
      o: { k: [1] },
      u: undefined,
    });
    expect(url.search).toBe("?fixed=1&s=a+b%26c&n=1.5&b=false&o=%7B%22k%22%3A%5B1%5D%7D");
  });

  it("refuses an input that is not an object", () => {
    expect(failureOf(() => urlWithQuery(new URL("https://a.test/"), [1, 2])).error.code).toBe("invalid_tool_input");
  });
});
