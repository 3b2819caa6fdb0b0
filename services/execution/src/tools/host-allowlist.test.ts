import { describe, expect, it } from "vitest";
import {
  hostMatches,
  isHostAllowed,
  normalizeAllowlist,
  parseHostPattern,
  parseHostPatterns,
} from "./host-allowlist.js";

describe("parseHostPattern", () => {
  it("normalizes hosts as URLs spell them", () => {
    expect(parseHostPattern(" API.Example.COM. ")).toBe("api.example.com");
    expect(parseHostPattern("*.Example.com")).toBe("*.example.com");
    expect(parseHostPattern("bücher.example")).toBe("xn--bcher-kva.example");
    expect(parseHostPattern("::1")).toBe("[::1]");
    expect(parseHostPattern("[0:0::1]")).toBe("[::1]");
    expect(parseHostPattern("127.1")).toBe("127.0.0.1");
  });

  it.each([
    "",
    "*",
    "*.",
    "*.*.example.com",
    "a.*.example.com",
    "https://example.com",
    "example.com:443",
    "example.com/x",
    "user@example.com",
    "exa mple.com",
    "*.10.0.0.1",
    "*.[::1]",
  ])("refuses %j", (raw) => {
    expect(() => parseHostPattern(raw)).toThrow(/invalid host pattern/);
  });

  it("splits lists on commas and whitespace", () => {
    expect(parseHostPatterns(" a.test, *.b.test\n c.test ")).toEqual(["a.test", "*.b.test", "c.test"]);
  });
});

describe("hostMatches", () => {
  it("matches exact hosts only, case-insensitively, ignoring a trailing dot", () => {
    expect(hostMatches("api.example.com", "api.example.com")).toBe(true);
    expect(hostMatches("api.example.com", "API.example.com.")).toBe(true);
    expect(hostMatches("api.example.com", "x.api.example.com")).toBe(false);
    expect(hostMatches("api.example.com", "api.example.com.evil.test")).toBe(false);
  });

  it("matches wildcards on subdomains at any depth, never the bare domain or a look-alike", () => {
    expect(hostMatches("*.example.com", "a.example.com")).toBe(true);
    expect(hostMatches("*.example.com", "a.b.example.com")).toBe(true);
    expect(hostMatches("*.example.com", "example.com")).toBe(false);
    expect(hostMatches("*.example.com", "evilexample.com")).toBe(false);
    expect(hostMatches("*.example.com", ".example.com")).toBe(false);
  });
});

describe("isHostAllowed", () => {
  const allowlist = normalizeAllowlist({
    hosts: ["*.weather.test", "[::1]"],
    byOrganization: new Map([["org_narrow", ["EU.weather.test"]]]),
  });

  it("narrows the list for the organizations that have their own", () => {
    expect(isHostAllowed(allowlist, "us.weather.test", "org_any")).toBe(true);
    expect(isHostAllowed(allowlist, "us.weather.test")).toBe(true);
    expect(isHostAllowed(allowlist, "us.weather.test", "org_narrow")).toBe(false);
    expect(isHostAllowed(allowlist, "eu.weather.test", "org_narrow")).toBe(true);
    expect(isHostAllowed(allowlist, "[::1]", "org_any")).toBe(true);
    expect(isHostAllowed(allowlist, "evil.test", "org_any")).toBe(false);
  });
});
