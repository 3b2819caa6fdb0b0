import { describe, expect, it } from "vitest";
import { hostAllowlistOf, hostPatternsOf, loadHostAllowlist } from "./host-config.js";
import { type HostPattern, isUrlAllowed, parseHostPattern, parseHostPatterns, urlMatchesAny } from "./host-patterns.js";

/**
 * The one table of host patterns: how each configured form is read, and which URLs it lets
 * through. The catalog (at save), execution (at call) and the webhooks all use these functions.
 */

/** Entry as configured → its canonical form. */
const CANONICAL: [string, string][] = [
  ["api.example.com", "api.example.com"],
  ["API.Example.COM", "api.example.com"],
  ["  api.example.com  ", "api.example.com"],
  ["api.example.com.", "api.example.com"],
  ["*.Example.com.", "*.example.com"],
  ["localhost", "localhost"],
  ["api_x.example", "api_x.example"],
  ["_service._tcp.example", "_service._tcp.example"],
  ["bücher.example", "xn--bcher-kva.example"],
  ["BÜCHER.example", "xn--bcher-kva.example"],
  ["xn--bcher-kva.example", "xn--bcher-kva.example"],
  ["XN--BCHER-KVA.EXAMPLE", "xn--bcher-kva.example"],
  ["*.bücher.example", "*.xn--bcher-kva.example"],
  ["ａｐｉ.example.com", "api.example.com"], // full-width letters, mapped by IDNA
  ["127.0.0.1", "127.0.0.1"],
  ["127.1", "127.0.0.1"],
  ["0x7f.0.0.1", "127.0.0.1"],
  ["2130706433", "127.0.0.1"],
  ["::1", "[::1]"],
  ["[::1]", "[::1]"],
  ["[0:0::1]", "[::1]"],
  ["0:0:0:0:0:0:0:1", "[::1]"],
  ["[2001:DB8::0:1]", "[2001:db8::1]"],
  ["::ffff:127.0.0.1", "[::ffff:7f00:1]"],
  [`${"a".repeat(63)}.example`, `${"a".repeat(63)}.example`],
];

/** Entries that make the configuration fail. */
const REFUSED: string[] = [
  "*",
  "*.",
  "*.*.example.com",
  "a.*.example.com",
  "*example.com",
  "**.example.com",
  "https://example.com",
  "example.com:443",
  "[::1]:443",
  "example.com/x",
  "example.com?x",
  "example.com#x",
  "example.com\\x",
  "user@example.com",
  "ex%61mple.com",
  "a..example.com",
  ".example.com",
  "example.com..",
  "a!b.example",
  "a^b.example",
  "xn--a.example", // not valid punycode
  "example.123", // a last label that is a number is an IPv4 address
  "256.0.0.1",
  "1.2.3.4.5",
  "fe80::1%eth0",
  "[1::2::3]",
  "[example.com]",
  `${"a".repeat(64)}.example`,
  `${"a.".repeat(127)}example`, // 261 characters
  "*.127.0.0.1",
  "*.127.1",
  "*.[::1]",
  "*.::1",
];

describe("parseHostPattern", () => {
  it.each(CANONICAL)("reads %j as %j", (entry, canonical) => {
    expect(parseHostPattern(entry)).toBe(canonical);
  });

  it.each(REFUSED)("refuses %j", (entry) => {
    expect(() => parseHostPattern(entry)).toThrow(/is not a host pattern|wildcard over an IP address/);
  });

  it("splits lists on commas and/or whitespace and drops duplicates", () => {
    expect(parseHostPatterns(" a.test, *.b.test\n c.test\td.test,,A.TEST.")).toEqual([
      "a.test",
      "*.b.test",
      "c.test",
      "d.test",
    ]);
    expect(parseHostPatterns("  ")).toEqual([]);
  });
});

const url = (text: string) => new URL(text);

/** Pattern list → URLs it allows → URLs it does not. */
const MATCHES: [string, string[], string[]][] = [
  [
    "api.example.com",
    [
      "https://api.example.com/v1",
      "https://API.EXAMPLE.COM/",
      "https://api.example.com./",
      "http://api.example.com:8080/",
    ],
    [
      "https://example.com/",
      "https://x.api.example.com/",
      "https://api.example.com.evil.test/",
      "https://api-example.com/",
    ],
  ],
  [
    "*.example.com",
    ["https://a.example.com/", "https://a.b.example.com/", "https://A.Example.com./"],
    ["https://example.com/", "https://evilexample.com/", "https://example.com.evil.test/", "https://*.example.com/"],
  ],
  ["api_x.example", ["https://api_x.example/"], ["https://apix.example/", "https://api-x.example/"]],
  [
    "bücher.example",
    ["https://bücher.example/", "https://BÜCHER.example/", "https://xn--bcher-kva.example/"],
    ["https://bucher.example/"],
  ],
  ["xn--bcher-kva.example", ["https://bücher.example/"], []],
  [
    "*.bücher.example",
    ["https://shop.xn--bcher-kva.example/", "https://shop.bücher.example/"],
    ["https://bücher.example/"],
  ],
  [
    "127.1",
    ["http://127.0.0.1:8080/", "http://127.1/", "http://0x7f.0.0.1/", "http://2130706433/"],
    ["http://127.0.0.2/", "http://[::ffff:127.0.0.1]/", "http://localhost/"],
  ],
  ["[0:0::1]", ["http://[::1]/", "http://[0:0:0:0:0:0:0:1]:80/"], ["http://127.0.0.1/", "http://[::2]/"]],
  ["::ffff:127.0.0.1", ["http://[::ffff:7f00:1]/", "http://[::ffff:127.0.0.1]/"], ["http://127.0.0.1/"]],
  ["localhost", ["http://localhost/", "http://LOCALHOST./"], ["http://localhost.localdomain/"]],
  ["a.test b.test,c.test", ["https://a.test/", "https://b.test/", "https://c.test/"], ["https://d.test/"]],
  ["", [], ["https://a.test/", "http://127.0.0.1/"]],
];

describe("urlMatchesAny and isUrlAllowed", () => {
  it.each(MATCHES)("%j", (list, allowed, refused) => {
    const patterns = parseHostPatterns(list);
    const allowlist = { hosts: patterns };
    for (const u of allowed) {
      expect(urlMatchesAny(patterns, url(u)), u).toBe(true);
      expect(isUrlAllowed(allowlist, url(u), "org_any"), u).toBe(true);
    }
    for (const u of refused) {
      expect(urlMatchesAny(patterns, url(u)), u).toBe(false);
      expect(isUrlAllowed(allowlist, url(u), "org_any"), u).toBe(false);
    }
  });

  it("narrows the list for the organizations that have their own", () => {
    const allowlist = hostAllowlistOf({
      HTTP_TOOL_ALLOWED_HOSTS: "*.weather.test [::1]",
      HTTP_TOOL_ALLOWED_HOSTS_BY_ORG: '{"org_narrow": ["EU.weather.test."], "org_none": []}',
    });
    const us = url("https://us.weather.test/");
    const eu = url("https://eu.weather.test/");
    expect(isUrlAllowed(allowlist, us, "org_any")).toBe(true);
    expect(isUrlAllowed(allowlist, us)).toBe(true);
    expect(isUrlAllowed(allowlist, us, "org_narrow")).toBe(false);
    expect(isUrlAllowed(allowlist, eu, "org_narrow")).toBe(true);
    expect(isUrlAllowed(allowlist, eu, "org_none")).toBe(false);
    expect(isUrlAllowed(allowlist, url("http://[::1]/"), "org_any")).toBe(true);
    expect(isUrlAllowed(allowlist, url("http://[::1]/"), "org_narrow")).toBe(false);
  });

  it("never lets a narrowed list widen the deployment's", () => {
    const allowlist = hostAllowlistOf({
      HTTP_TOOL_ALLOWED_HOSTS: "api.example.com",
      HTTP_TOOL_ALLOWED_HOSTS_BY_ORG: '{"org_wide": ["*.evil.test"]}',
    });
    expect(isUrlAllowed(allowlist, url("https://x.evil.test/"), "org_wide")).toBe(false);
  });
});

describe("the configuration loader", () => {
  it("reads both variables from the environment, empty by default", () => {
    expect(loadHostAllowlist({})).toEqual({ hosts: [] });
    expect(
      loadHostAllowlist({
        HTTP_TOOL_ALLOWED_HOSTS: "api.example.com, *.Weather.test",
        HTTP_TOOL_ALLOWED_HOSTS_BY_ORG: '{"org_1":["eu.weather.test"]}',
      }),
    ).toEqual({
      hosts: ["api.example.com", "*.weather.test"],
      byOrganization: new Map([["org_1", ["eu.weather.test"]]]),
    });
  });

  it("fails naming the variable and every bad entry", () => {
    expect(() => hostPatternsOf("WEBHOOK_PRIVATE_HOSTS", "ok.test, *.127.0.0.1 api.test:80")).toThrow(
      'invalid configuration: WEBHOOK_PRIVATE_HOSTS: "*.127.0.0.1" is a wildcard over an IP address, which matches no host: list the address itself; WEBHOOK_PRIVATE_HOSTS: "api.test:80" is not a host pattern',
    );
    const load =
      (hosts: string, byOrg = "") =>
      () =>
        loadHostAllowlist({ HTTP_TOOL_ALLOWED_HOSTS: hosts, HTTP_TOOL_ALLOWED_HOSTS_BY_ORG: byOrg });
    expect(load("https://api.example.com")).toThrow(
      /^invalid configuration: HTTP_TOOL_ALLOWED_HOSTS: "https:\/\/api.example.com" is not/,
    );
    expect(load("a.test", "{")).toThrow("invalid configuration: HTTP_TOOL_ALLOWED_HOSTS_BY_ORG is not JSON");
    expect(load("a.test", '["a.test"]')).toThrow(/HTTP_TOOL_ALLOWED_HOSTS_BY_ORG must be \{/);
    expect(load("a.test", '{"org_1": "a.test"}')).toThrow(
      'HTTP_TOOL_ALLOWED_HOSTS_BY_ORG["org_1"] must be a list of host patterns',
    );
    expect(load("a.test", '{"org_1": ["a.test", "a.test b.test"]}')).toThrow(
      'HTTP_TOOL_ALLOWED_HOSTS_BY_ORG["org_1"][1]: "a.test b.test" is not a host pattern',
    );
  });

  it("makes the patterns the matcher takes (a raw string is not a HostPattern)", () => {
    // @ts-expect-error: only the parser makes HostPatterns.
    const raw: HostPattern[] = ["api.example.com"];
    expect(raw).toHaveLength(1);
  });
});
