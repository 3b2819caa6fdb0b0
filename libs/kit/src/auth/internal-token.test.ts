import { SignJWT } from "jose";
import { afterEach, describe, expect, it, vi } from "vitest";
import { DomainError } from "../errors.js";
import { createInternalTokens } from "./internal-token.js";
import type { Principal } from "./principal.js";

const SECRET = "0123456789abcdef0123456789abcdef-test";
const OTHER_SECRET = "fedcba9876543210fedcba9876543210-other";

const user: Principal = { type: "user", id: "usr_0190a1b2c3d4e5f60718293a4b5c6d7e" };
const service: Principal = { type: "service", id: "gateway" };
const serviceInOrg: Principal = {
  type: "service",
  id: "evaluation",
  organizationId: "org_0190a1b2c3d4e5f60718293a4b5c6d7f",
};
const apiKey: Principal = {
  type: "api_key",
  id: "key_0190a1b2c3d4e5f60718293a4b5c6d7e",
  organizationId: "org_0190a1b2c3d4e5f60718293a4b5c6d7f",
  scopes: ["prompts:read", "runs:write"],
};

/** A token made with jose directly: the claims createInternalTokens makes, with any changes wanted. */
async function handMade(options: {
  secret?: string;
  issuer?: string;
  audience?: string;
  claims?: Record<string, unknown>;
  subject?: string;
  expiresInSeconds?: number;
}): Promise<string> {
  const nowSeconds = Math.floor(Date.now() / 1000);
  return new SignJWT(options.claims ?? { typ: "user" })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setIssuer(options.issuer ?? "kiln-internal")
    .setAudience(options.audience ?? "kiln-services")
    .setSubject(options.subject ?? user.id)
    .setIssuedAt(nowSeconds - 120)
    .setExpirationTime(nowSeconds + (options.expiresInSeconds ?? 60))
    .sign(new TextEncoder().encode(options.secret ?? SECRET));
}

async function expectUnauthenticated(p: Promise<unknown>): Promise<void> {
  const error = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(DomainError);
  expect((error as DomainError).kind).toBe("unauthenticated");
}

afterEach(() => {
  vi.useRealTimers();
});

describe("createInternalTokens", () => {
  it.each([
    ["user", user],
    ["service", service],
    ["service acting in one organization", serviceInOrg],
    ["api_key", apiKey],
    ["api_key with a token-per-minute limit", { ...apiKey, tokensPerMinute: 50_000 } as Principal],
  ])("round-trips a %s principal", async (_, principal) => {
    const tokens = createInternalTokens(SECRET);
    const token = await tokens.sign(principal);
    expect(await tokens.verify(token)).toEqual(principal);
    // A peer with the same secret (another process) reads the same principal.
    expect(await createInternalTokens(SECRET).verify(token)).toEqual(principal);
  });

  it("signs a new token for a key whose limit changed, not the one cached for its old limit", async () => {
    const tokens = createInternalTokens(SECRET);
    const before = await tokens.sign({ ...apiKey, tokensPerMinute: 1_000 });
    const after = await tokens.sign({ ...apiKey, tokensPerMinute: 2_000 });
    expect(after).not.toBe(before);
    expect(await tokens.verify(after)).toMatchObject({ tokensPerMinute: 2_000 });
    expect(await tokens.verify(await tokens.sign(apiKey))).not.toHaveProperty("tokensPerMinute");
  });

  it("reuses a signed token while it has more than half its life left", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const tokens = createInternalTokens(SECRET, { ttlSeconds: 60 });
    const first = await tokens.sign(user);
    vi.advanceTimersByTime(29_000);
    expect(await tokens.sign(user)).toBe(first);
    vi.advanceTimersByTime(2_000);
    const renewed = await tokens.sign(user);
    expect(renewed).not.toBe(first);
    expect(await tokens.verify(renewed)).toEqual(user);
  });

  it("signs a separate token for each principal, scopes included", async () => {
    const tokens = createInternalTokens(SECRET);
    const narrower: Principal = { ...apiKey, scopes: ["prompts:read"] };
    const signed = await Promise.all([
      tokens.sign(user),
      tokens.sign(service),
      tokens.sign(apiKey),
      tokens.sign(narrower),
    ]);
    expect(new Set(signed).size).toBe(4);
    expect(await tokens.verify(signed[3] as string)).toEqual(narrower);
  });

  it("accepts a hand-made token with the expected claims", async () => {
    // The control for the refusals below: they differ from this token in one respect each.
    expect(await createInternalTokens(SECRET).verify(await handMade({}))).toEqual(user);
  });

  it("refuses a token whose payload was changed", async () => {
    const tokens = createInternalTokens(SECRET);
    const [header, payload, signature] = (await tokens.sign(user)).split(".") as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as Record<string, unknown>;
    const forged = Buffer.from(JSON.stringify({ ...claims, typ: "service" })).toString("base64url");
    await expectUnauthenticated(tokens.verify(`${header}.${forged}.${signature}`));
  });

  it("refuses a token whose signature was changed", async () => {
    const tokens = createInternalTokens(SECRET);
    const token = await tokens.sign(user);
    const last = token.at(-2) === "A" ? "B" : "A";
    await expectUnauthenticated(tokens.verify(`${token.slice(0, -2)}${last}${token.at(-1)}`));
  });

  it("refuses a token signed with another secret", async () => {
    const forged = await createInternalTokens(OTHER_SECRET).sign(service);
    await expectUnauthenticated(createInternalTokens(SECRET).verify(forged));
  });

  it("refuses an expired token", async () => {
    await expectUnauthenticated(createInternalTokens(SECRET).verify(await handMade({ expiresInSeconds: -1 })));
  });

  it("refuses a token once it expires, even after verifying it before", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const tokens = createInternalTokens(SECRET, { ttlSeconds: 60 });
    const token = await tokens.sign(user);
    expect(await tokens.verify(token)).toEqual(user);
    vi.advanceTimersByTime(61_000);
    await expectUnauthenticated(tokens.verify(token));
  });

  it("refuses a token of another issuer or audience", async () => {
    const tokens = createInternalTokens(SECRET);
    await expectUnauthenticated(tokens.verify(await handMade({ issuer: "kiln" })));
    await expectUnauthenticated(tokens.verify(await handMade({ audience: "kiln-api" })));
  });

  it("refuses api_key claims without an organization or scopes, and an unknown principal type", async () => {
    const tokens = createInternalTokens(SECRET);
    await expectUnauthenticated(tokens.verify(await handMade({ claims: { typ: "api_key", scp: ["prompts:read"] } })));
    await expectUnauthenticated(
      tokens.verify(await handMade({ claims: { typ: "api_key", org: apiKey.organizationId } })),
    );
    await expectUnauthenticated(tokens.verify(await handMade({ claims: { typ: "admin" } })));
  });

  it("signs the organization a service acts for as its org claim, and keeps tokens of two organizations apart", async () => {
    const tokens = createInternalTokens(SECRET);
    const inA = await tokens.sign(serviceInOrg);
    const inB = await tokens.sign({ ...serviceInOrg, organizationId: "org_b" });
    const platform = await tokens.sign({ type: "service", id: "evaluation" });
    expect(new Set([inA, inB, platform]).size).toBe(3);
    expect(await tokens.verify(inB)).toEqual({ type: "service", id: "evaluation", organizationId: "org_b" });
    expect(await tokens.verify(platform)).toEqual({ type: "service", id: "evaluation" });
  });

  it("refuses a service token whose organization claim is empty or not a string", async () => {
    const tokens = createInternalTokens(SECRET);
    for (const org of ["", 42, ["org_a"]]) {
      await expectUnauthenticated(
        tokens.verify(await handMade({ subject: "evaluation", claims: { typ: "service", org } })),
      );
    }
  });

  it("refuses an unsigned token", async () => {
    const part = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
    const exp = Math.floor(Date.now() / 1000) + 60;
    const unsigned = `${part({ alg: "none" })}.${part({ typ: "service", iss: "kiln-internal", aud: "kiln-services", sub: "x", exp })}.`;
    await expectUnauthenticated(createInternalTokens(SECRET).verify(unsigned));
  });

  it.each(["", "not-a-token", "a.b.c"])("refuses the malformed token %j", async (token) => {
    await expectUnauthenticated(createInternalTokens(SECRET).verify(token));
  });

  it("refuses a secret shorter than 32 characters", () => {
    expect(() => createInternalTokens("x".repeat(31))).toThrow(/at least 32 characters/);
    expect(() => createInternalTokens("x".repeat(32))).not.toThrow();
  });
});
