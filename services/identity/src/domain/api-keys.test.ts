import { createHash } from "node:crypto";
import { newId } from "@kiln/kit/ids";
import { describe, expect, it } from "vitest";
import { API_KEY_SCOPES, generateApiKey, hashSecret, isApiKeyScope, parseApiKey, secretMatches } from "./api-keys.js";

const BASE62 = /^[0-9A-Za-z]+$/;

describe("generateApiKey", () => {
  it("makes sk_<key id hex>_<43 base62 characters> and the SHA-256 of the secret", () => {
    const keyId = newId("key");
    const { key, secretHash } = generateApiKey(keyId);
    const m = /^sk_([0-9a-f]{32})_([0-9A-Za-z]{43})$/.exec(key);
    expect(m?.[1]).toBe(keyId.slice("key_".length));
    const secret = m?.[2] ?? "";
    expect(secretHash).toBe(createHash("sha256").update(secret).digest("hex"));
    expect(secretHash).not.toContain(secret);
  });

  it("makes a new secret every time, drawn from all 62 characters", () => {
    const keyId = newId("key");
    const secrets = Array.from({ length: 300 }, () => parseApiKey(generateApiKey(keyId).key)?.secret ?? "");
    expect(new Set(secrets).size).toBe(300);
    for (const s of secrets) expect(s).toMatch(BASE62);
    // 12,900 draws: a biased or narrower alphabet (hex, say) would miss characters.
    expect(new Set(secrets.join("")).size).toBe(62);
  });
});

describe("parseApiKey", () => {
  it("splits a generated key into its key id and secret", () => {
    const keyId = newId("key");
    const { key, secretHash } = generateApiKey(keyId);
    const parsed = parseApiKey(key);
    expect(parsed?.keyId).toBe(keyId);
    expect(hashSecret(parsed?.secret ?? "")).toBe(secretHash);
  });

  it.each([
    ["empty", ""],
    ["another prefix", `pk_${"a".repeat(32)}_${"b".repeat(43)}`],
    ["a short key id", `sk_${"a".repeat(31)}_${"b".repeat(43)}`],
    ["an upper-case key id", `sk_${"A".repeat(32)}_${"b".repeat(43)}`],
    ["a short secret", `sk_${"a".repeat(32)}_${"b".repeat(21)}`],
    ["a secret with other characters", `sk_${"a".repeat(32)}_${"b".repeat(40)}-_+`],
    ["a trailing newline", `sk_${"a".repeat(32)}_${"b".repeat(43)}\n`],
    ["no secret", `sk_${"a".repeat(32)}_`],
  ])("refuses a value that is not shaped like a key (%s)", (_, value) => {
    expect(parseApiKey(value)).toBeUndefined();
  });
});

describe("secretMatches", () => {
  it("accepts the secret whose hash is stored and refuses another", () => {
    const stored = hashSecret("the-secret");
    expect(secretMatches("the-secret", stored)).toBe(true);
    expect(secretMatches("the-secreT", stored)).toBe(false);
  });

  it("refuses a stored hash of another length instead of throwing", () => {
    expect(secretMatches("the-secret", "abcd")).toBe(false);
    expect(secretMatches("the-secret", "")).toBe(false);
  });
});

describe("isApiKeyScope", () => {
  it("knows the twelve scopes of api.md, labels:write (docs/labels.md), webhooks:read/write (docs/webhooks.md), connections:read/write (docs/providers.md), audit:read (docs/governance.md) and nothing else", () => {
    expect(API_KEY_SCOPES).toHaveLength(20);
    expect(API_KEY_SCOPES).toContain("audit:read");
    expect(API_KEY_SCOPES).toContain("connections:read");
    expect(API_KEY_SCOPES).toContain("connections:write");
    expect(API_KEY_SCOPES).toContain("traces:write");
    expect(API_KEY_SCOPES).toContain("webhooks:write");
    expect(API_KEY_SCOPES).toContain("labels:write");
    for (const s of API_KEY_SCOPES) expect(isApiKeyScope(s)).toBe(true);
    for (const s of ["prompts:admin", "runs", "", "PROMPTS:READ", "ai_platform"]) expect(isApiKeyScope(s)).toBe(false);
  });
});
