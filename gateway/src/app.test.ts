import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { createLogger } from "@kiln/kit/logger";
import { buildTestPlatform } from "@kiln/testing/platform";
import {
  type ApiKey,
  type CreatedApiKey,
  createTestClient,
  type ErrorBody,
  type List,
  type Model,
  type OnboardingResult,
  type SetupVerifyResult,
  type SignUpResult,
  TEST_PASSWORD,
  type TestClient,
  type TestResponse,
  type TokenResult,
} from "@kiln/testing/test-client";
import { decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, type JWTPayload, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * The gateway's REST contract (api.md "Conventions", "Authentication", "Identity") through the
 * embedded platform, as a client sees it: over a real socket and through app.inject().
 */

const API_KEY_CACHE_TTL_MS = 300;
const OIDC_ISSUER = "https://login.example.test/";
const OIDC_AUDIENCE = "kiln-test-api";
const MIB = 1024 * 1024;
const KEY_SCOPES = ["prompts:read", "runs:write"];

type Embedded = Awaited<ReturnType<typeof buildTestPlatform>>;
type PrivateKey = Awaited<ReturnType<typeof generateKeyPair>>["privateKey"];

let kiln: Embedded;
let jwksServer: Server;
/** How the issuer's JWKS endpoint behaves, and how often it was asked. */
let jwksMode: "up" | "error" | "reset" = "up";
let jwksFetches = 0;
let oidcKey: { privateKey: PrivateKey; kid: string };
let http: TestClient;
let api: TestClient;

const transports = ["http", "inject"] as const;
const clientOf = (t: (typeof transports)[number]) => (t === "http" ? http : api);

beforeAll(async () => {
  // A tiny external OIDC issuer: only its JWKS is needed, tokens are signed here.
  const { privateKey, publicKey } = await generateKeyPair("ES256");
  oidcKey = { privateKey, kid: "test-oidc-1" };
  const jwks = JSON.stringify({
    keys: [{ ...(await exportJWK(publicKey)), kid: oidcKey.kid, alg: "ES256", use: "sig" }],
  });
  jwksServer = createServer((req, res) => {
    jwksFetches += 1;
    if (jwksMode === "reset") req.socket.destroy();
    else if (jwksMode === "error") res.writeHead(503).end("down for maintenance");
    else res.writeHead(200, { "content-type": "application/json" }).end(jwks);
  });
  jwksServer.listen(0, "127.0.0.1");
  await once(jwksServer, "listening");
  const jwksUrl = `http://127.0.0.1:${(jwksServer.address() as AddressInfo).port}/jwks.json`;

  kiln = await buildTestPlatform({
    logger: createLogger({ name: "test", level: "silent" }),
    apiKeyCacheTtlMs: API_KEY_CACHE_TTL_MS,
    oidc: { issuer: OIDC_ISSUER, audience: OIDC_AUDIENCE, jwksUrl },
  });
  const address = await kiln.gateway.app.listen({ port: 0, host: "127.0.0.1" });
  http = createTestClient(address);
  api = createTestClient(kiln.gateway.app);
});

afterAll(async () => {
  await kiln?.close();
  await new Promise((resolve) => (jwksServer ? jwksServer.close(resolve) : resolve(undefined)));
});

/** The error envelope of api.md with this status and code; returns the error for further checks. */
function expectError(res: TestResponse, status: number, code: string, field?: string): ErrorBody["error"] {
  expect(res.status, res.text).toBe(status);
  const requestId = res.headers["x-request-id"];
  expect(requestId).toBeTruthy();
  expect(res.body).toEqual({
    error: { code, message: expect.any(String), details: expect.any(Array), requestId },
  });
  const { error } = res.body as ErrorBody;
  expect(error.message).not.toBe("");
  for (const d of error.details) expect(d).toEqual({ field: expect.any(String), issue: expect.any(String) });
  if (field !== undefined) expect(error.details.map((d) => d.field)).toContain(field);
  if (status === 401) expect(res.headers["www-authenticate"]).toMatch(/^Bearer\b/);
  if (status === 500) expect(error.message).toBe("internal error");
  return error;
}

const id = (prefix: string) => new RegExp(`^${prefix}_[0-9A-Za-z]+$`);
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/;

/** A fresh user with an organization. */
async function onboardedUser(c: TestClient = api) {
  const user = await c.signUp();
  const onboarding = await c.onboard(user.accessToken);
  return { user, token: user.accessToken, org: onboarding.organization, onboarding };
}

async function keysOf(c: TestClient, token: string, organizationId: string): Promise<ApiKey[]> {
  const res = await c.get<List<ApiKey>>("/api/api-keys", { token, query: { organizationId } });
  expect(res.status, res.text).toBe(200);
  return res.body.data;
}

function verify(c: TestClient, credential: { token?: string; apiKey?: string }, organizationId?: string) {
  return c.post<SetupVerifyResult>("/api/setup/verify", organizationId ? { organizationId } : {}, credential);
}

const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");

/** A JWT without a signature (`alg: none`). */
const unsecuredJwt = (header: Record<string, unknown>, payload: JWTPayload) => `${b64url(header)}.${b64url(payload)}.`;

async function signOidc(claims: JWTPayload, options: { key?: PrivateKey; kid?: string } = {}): Promise<string> {
  const nowSeconds = Math.floor(Date.now() / 1000);
  return new SignJWT({ jti: randomUUID(), ...claims })
    .setProtectedHeader({ alg: "ES256", kid: options.kid ?? oidcKey.kid })
    .setIssuer(claims.iss ?? OIDC_ISSUER)
    .setAudience(claims.aud ?? OIDC_AUDIENCE)
    .setIssuedAt(claims.iat ?? nowSeconds)
    .setExpirationTime(claims.exp ?? nowSeconds + 600)
    .sign(options.key ?? oidcKey.privateKey);
}

describe.each(transports)("the identity flow over %s", (transport) => {
  it("signs up (201), exchanges the password for a token (200) and onboards once (201, then 200)", async () => {
    const c = clientOf(transport);
    const email = `Flow-${randomUUID()}@Example.test`;
    const signUp = await c.post<SignUpResult>("/api/auth/signup", { email, password: TEST_PASSWORD, fullName: "Ada" });
    expect(signUp.status, signUp.text).toBe(201);
    expect(signUp.body).toEqual({
      user: { id: expect.stringMatching(id("usr")), email: email.toLowerCase(), fullName: "Ada" },
      accessToken: expect.any(String),
      expiresAt: expect.stringMatching(ISO),
    });
    expect(Date.parse(signUp.body.expiresAt)).toBeGreaterThan(Date.now());
    expect(decodeJwt(signUp.body.accessToken).sub).toBe(signUp.body.user.id);

    const token = await c.post<TokenResult>("/api/auth/token", { email, password: TEST_PASSWORD });
    expect(token.status, token.text).toBe(200);
    expect(token.body).toEqual({ accessToken: expect.any(String), expiresAt: expect.stringMatching(ISO) });
    expect(decodeJwt(token.body.accessToken).sub).toBe(signUp.body.user.id);

    const first = await c.post<OnboardingResult>(
      "/api/onboarding/complete",
      { fullName: "Ada Lovelace", organizationName: "Analytical" },
      { token: token.body.accessToken },
    );
    expect(first.status, first.text).toBe(201);
    expect(first.body).toMatchObject({
      user: { id: signUp.body.user.id, email: email.toLowerCase(), fullName: "Ada Lovelace" },
      organization: {
        id: expect.stringMatching(id("org")),
        name: "Analytical",
        plan: "free",
        entitlements: { aiEnabled: true },
      },
      membership: { role: "owner", userId: signUp.body.user.id },
    });
    expect(first.body.membership.organizationId).toBe(first.body.organization.id);
    expect(first.body.membership.permissions).toContain("ai_platform");
    expect(first.body.organization.createdAt).toMatch(ISO);

    const repeat = await c.post<OnboardingResult>(
      "/api/onboarding/complete",
      { fullName: "Someone Else", organizationName: "Another name" },
      { token: signUp.body.accessToken },
    );
    expect(repeat.status, repeat.text).toBe(200);
    expect(repeat.body.organization).toEqual(first.body.organization);
    expect(repeat.body.membership.role).toBe("owner");
  });

  it("verifies the setup of an onboarded user: ok with the four checks", async () => {
    const c = clientOf(transport);
    const { user, token, org } = await onboardedUser(c);
    for (const res of [await verify(c, { token }), await verify(c, { token }, org.id)]) {
      expect(res.status, res.text).toBe(200);
      expect(res.body.ok).toBe(true);
      expect(res.body.principal).toEqual({ type: "user", id: user.user.id });
      expect(res.body.organization).toMatchObject({ id: org.id, plan: "free", entitlements: { aiEnabled: true } });
      expect(res.body.checks.map((ch) => [ch.name, ch.ok])).toEqual([
        ["authentication", true],
        ["organization", true],
        ["ai_entitlement", true],
        ["ai_permission", true],
      ]);
    }
  });

  it("creates an API key shown once, lists it without its secret and verifies with it in both headers", async () => {
    const c = clientOf(transport);
    const { user, token, org } = await onboardedUser(c);
    const created = await c.post<CreatedApiKey>(
      "/api/api-keys",
      { organizationId: org.id, name: "ci", scopes: KEY_SCOPES },
      { token },
    );
    expect(created.status, created.text).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(id("key")),
      name: "ci",
      scopes: KEY_SCOPES,
      organizationId: org.id,
      key: expect.any(String),
      createdAt: expect.stringMatching(ISO),
      tokensPerMinute: null,
    });
    const { key } = created.body;
    expect(key.startsWith(`sk_${created.body.id.slice("key_".length)}_`)).toBe(true);
    // ≥ 128 random bits of base62 in the secret.
    expect(key.split("_").at(-1)).toMatch(/^[0-9A-Za-z]{22,}$/);

    const list = await c.get<List<Record<string, unknown>>>("/api/api-keys", {
      token,
      query: { organizationId: org.id },
    });
    expect(list.status, list.text).toBe(200);
    expect(list.body).toEqual({
      data: [
        {
          id: created.body.id,
          name: "ci",
          scopes: KEY_SCOPES,
          organizationId: org.id,
          createdByUserId: user.user.id,
          createdAt: created.body.createdAt,
          revokedAt: null,
          tokensPerMinute: null,
        },
      ],
      nextCursor: null,
    });
    expect(list.text).not.toContain(key.split("_").at(-1));

    for (const credential of [{ token: key }, { apiKey: key }]) {
      const res = await verify(c, credential);
      expect(res.status, res.text).toBe(200);
      expect(res.body.ok).toBe(true);
      expect(res.body.principal).toEqual({ type: "api_key", id: created.body.id, scopes: KEY_SCOPES });
      expect(res.body.organization?.id).toBe(org.id);
      expect(res.body.checks.map((ch) => ch.name)).toEqual([
        "authentication",
        "organization",
        "ai_entitlement",
        "ai_permission",
      ]);
    }
  });

  it("lists the models with local/echo available and free", async () => {
    const c = clientOf(transport);
    const { org, token } = await onboardedUser(c);
    const { key } = await c.createApiKey(token, org.id, ["prompts:read"]);
    for (const credential of [{ token }, { apiKey: key }]) {
      const res = await c.get<List<Model>>("/api/models", credential);
      expect(res.status, res.text).toBe(200);
      expect(res.body.nextCursor).toBeNull();
      expect(res.body.data.find((m) => m.id === "local/echo")).toEqual({
        id: "local/echo",
        provider: "local",
        model: "echo",
        available: true,
        capabilities: { tools: true, jsonSchema: true, input: ["text"] },
        pricing: { inputPerMTokUsd: 0, outputPerMTokUsd: 0 },
      });
      // No OpenAI credentials in this deployment.
      const openai = res.body.data.filter((m) => m.provider === "openai");
      expect(openai.length).toBeGreaterThan(0);
      for (const m of openai) expect(m.available).toBe(false);
      for (const m of openai) expect(m.capabilities.input).toEqual(["text", "image"]);
    }
  });

  it("revokes a key at once: 200 with revokedAt, then 401 in both headers, also after the cache TTL", async () => {
    const c = clientOf(transport);
    const { org, token } = await onboardedUser(c);
    const created = await c.createApiKey(token, org.id, ["prompts:read"]);
    // Warm every cache with a successful use first.
    expect((await verify(c, { token: created.key })).status).toBe(200);
    expect((await c.get("/api/models", { apiKey: created.key })).status).toBe(200);

    const revoked = await c.delete<ApiKey>(`/api/api-keys/${created.id}`, { token });
    expect(revoked.status, revoked.text).toBe(200);
    expect(revoked.body).toMatchObject({
      id: created.id,
      organizationId: org.id,
      revokedAt: expect.stringMatching(ISO),
    });
    expect(revoked.body).not.toHaveProperty("key");

    const check = async () => {
      expectError(await verify(c, { token: created.key }), 401, "unauthenticated");
      expectError(await verify(c, { apiKey: created.key }), 401, "unauthenticated");
      expectError(await c.get("/api/models", { apiKey: created.key }), 401, "unauthenticated");
    };
    await check(); // well within the cache TTL: the gateway forgets revoked keys at once
    await sleep(API_KEY_CACHE_TTL_MS + 100);
    await check();

    const [listed] = await keysOf(c, token, org.id);
    expect(listed).toEqual({ ...revoked.body });
    // Revoking again keeps the first revocation time.
    const again = await c.delete<ApiKey>(`/api/api-keys/${created.id}`, { token });
    expect(again.status).toBe(200);
    expect(again.body.revokedAt).toBe(revoked.body.revokedAt);
  });

  it("lists keys newest first, one page at a time", async () => {
    const c = clientOf(transport);
    const { org, token } = await onboardedUser(c);
    const older = await c.createApiKey(token, org.id, ["prompts:read"], "older");
    const newer = await c.createApiKey(token, org.id, ["prompts:read"], "newer");
    expect((await keysOf(c, token, org.id)).map((k) => k.id)).toEqual([newer.id, older.id]);
    const page1 = await c.get<List<ApiKey>>("/api/api-keys", { token, query: { organizationId: org.id, limit: 1 } });
    expect(page1.body.data.map((k) => k.id)).toEqual([newer.id]);
    expect(page1.body.nextCursor).toEqual(expect.any(String));
    const page2 = await c.get<List<ApiKey>>("/api/api-keys", {
      token,
      query: { organizationId: org.id, limit: 1, cursor: page1.body.nextCursor ?? "" },
    });
    expect(page2.body).toEqual({ data: [expect.objectContaining({ id: older.id })], nextCursor: null });
  });
});

describe("bad input answers with the error envelope and changes nothing", () => {
  interface BadRequest {
    name: string;
    /** `subject`: the e-mail address (sign-up) or the organization id (API keys). */
    send: (c: TestClient, ctx: { subject: string; token: string; key: string }) => Promise<TestResponse>;
    status: number;
    code: string;
    field?: string;
  }

  const json = { "content-type": "application/json" };

  describe("sign-up", () => {
    const cases: BadRequest[] = [
      {
        name: "malformed JSON",
        send: (c, { subject: email }) =>
          c.request("POST", "/api/auth/signup", {
            rawBody: `{"email":"${email}","password":"${TEST_PASSWORD}",`,
            headers: json,
          }),
        status: 400,
        code: "invalid_argument",
      },
      {
        name: "a text/plain body",
        send: (c, { subject: email }) =>
          c.request("POST", "/api/auth/signup", {
            rawBody: JSON.stringify({ email, password: TEST_PASSWORD }),
            headers: { "content-type": "text/plain" },
          }),
        status: 400,
        code: "invalid_argument",
      },
      {
        name: "a body without Content-Type",
        send: (c, { subject: email }) =>
          c.request("POST", "/api/auth/signup", { rawBody: JSON.stringify({ email, password: TEST_PASSWORD }) }),
        status: 400,
        code: "invalid_argument",
      },
      {
        name: "a JSON array",
        send: (c, { subject: email }) => c.post("/api/auth/signup", [{ email, password: TEST_PASSWORD }]),
        status: 400,
        code: "invalid_argument",
        field: "body",
      },
      {
        name: "an unknown field",
        send: (c, { subject: email }) => c.post("/api/auth/signup", { email, password: TEST_PASSWORD, isAdmin: true }),
        status: 400,
        code: "invalid_argument",
        field: "isAdmin",
      },
      {
        name: "a missing password",
        send: (c, { subject: email }) => c.post("/api/auth/signup", { email }),
        status: 400,
        code: "invalid_argument",
        field: "password",
      },
      {
        name: "a mistyped fullName",
        send: (c, { subject: email }) =>
          c.post("/api/auth/signup", { email, password: TEST_PASSWORD, fullName: { first: "Ada" } }),
        status: 400,
        code: "invalid_argument",
        field: "fullName",
      },
      {
        name: "a short password",
        send: (c, { subject: email }) => c.post("/api/auth/signup", { email, password: "short" }),
        status: 400,
        code: "invalid_argument",
        field: "password",
      },
      {
        name: "a body over 1 MiB",
        send: (c, { subject: email }) =>
          c.post("/api/auth/signup", { email, password: TEST_PASSWORD, fullName: "x".repeat(MIB) }),
        status: 413,
        code: "payload_too_large",
      },
    ];

    it.each(cases)("refuses $name with $status and creates no account", async ({ send, status, code, field }) => {
      const email = `bad-${randomUUID()}@example.test`;
      expectError(await send(api, { subject: email, token: "", key: "" }), status, code, field);
      expectError(await api.post("/api/auth/token", { email, password: TEST_PASSWORD }), 401, "unauthenticated");
      // The address is still free.
      expect((await api.signUp(email)).user.email).toBe(email);
    });

    it("refuses an address that is not an e-mail address", async () => {
      expectError(
        await api.post("/api/auth/signup", { email: "not-an-email", password: TEST_PASSWORD }),
        400,
        "invalid_argument",
        "email",
      );
    });

    it("refuses a second account for the same address (409) and keeps the first password", async () => {
      const first = await api.signUp();
      const again = await api.post("/api/auth/signup", {
        email: first.email.toUpperCase(),
        password: "another-password-1",
      });
      expectError(again, 409, "already_exists", "email");
      expect((await api.token(first.email)).accessToken).toEqual(expect.any(String));
      expectError(
        await api.post("/api/auth/token", { email: first.email, password: "another-password-1" }),
        401,
        "unauthenticated",
      );
    });

    it("answers a wrong password and an unknown address alike (401)", async () => {
      const { email } = await api.signUp();
      const wrong = expectError(
        await api.post("/api/auth/token", { email, password: "wrong-password" }),
        401,
        "unauthenticated",
      );
      const unknown = expectError(
        await api.post("/api/auth/token", { email: `nobody-${randomUUID()}@example.test`, password: "wrong-password" }),
        401,
        "unauthenticated",
      );
      expect(wrong.message).toBe(unknown.message);
    });
  });

  describe("onboarding", () => {
    const body = { fullName: "Ada", organizationName: "Analytical" };
    const cases: BadRequest[] = [
      {
        name: "malformed JSON",
        send: (c, { token }) =>
          c.request("POST", "/api/onboarding/complete", { token, rawBody: '{"fullName":', headers: json }),
        status: 400,
        code: "invalid_argument",
      },
      {
        name: "a text/plain body",
        send: (c, { token }) =>
          c.request("POST", "/api/onboarding/complete", {
            token,
            rawBody: JSON.stringify(body),
            headers: { "content-type": "text/plain" },
          }),
        status: 400,
        code: "invalid_argument",
      },
      {
        name: "an unknown field",
        send: (c, { token }) => c.post("/api/onboarding/complete", { ...body, plan: "enterprise" }, { token }),
        status: 400,
        code: "invalid_argument",
        field: "plan",
      },
      {
        name: "a missing organizationName",
        send: (c, { token }) => c.post("/api/onboarding/complete", { fullName: "Ada" }, { token }),
        status: 400,
        code: "invalid_argument",
        field: "organizationName",
      },
      {
        name: "an empty body",
        send: (c, { token }) => c.post("/api/onboarding/complete", undefined, { token }),
        status: 400,
        code: "invalid_argument",
        field: "fullName",
      },
      {
        name: "a mistyped fullName",
        send: (c, { token }) => c.post("/api/onboarding/complete", { ...body, fullName: 42 }, { token }),
        status: 400,
        code: "invalid_argument",
        field: "fullName",
      },
      {
        name: "a blank organizationName",
        send: (c, { token }) => c.post("/api/onboarding/complete", { ...body, organizationName: "   " }, { token }),
        status: 400,
        code: "invalid_argument",
        field: "organizationName",
      },
      {
        name: "an organizationName over 200 characters",
        send: (c, { token }) =>
          c.post("/api/onboarding/complete", { ...body, organizationName: "o".repeat(201) }, { token }),
        status: 400,
        code: "invalid_argument",
        field: "organizationName",
      },
      {
        name: "a body over 1 MiB",
        send: (c, { token }) => c.post("/api/onboarding/complete", { ...body, fullName: "x".repeat(MIB) }, { token }),
        status: 413,
        code: "payload_too_large",
      },
      {
        name: "no credentials",
        send: (c) => c.post("/api/onboarding/complete", body),
        status: 401,
        code: "unauthenticated",
      },
    ];

    it.each(cases)("refuses $name with $status and creates no organization", async ({ send, status, code, field }) => {
      const user = await api.signUp();
      expectError(await send(api, { subject: user.email, token: user.accessToken, key: "" }), status, code, field);
      const setup = await verify(api, { token: user.accessToken });
      expect(setup.body).toMatchObject({ ok: false, organization: null });
      expect(setup.body.checks.find((ch) => ch.name === "organization")?.ok).toBe(false);
      // The first real onboarding is still the one that creates the organization.
      expect((await api.onboard(user.accessToken)).status).toBe(201);
    });

    it("refuses an API key (403) and leaves the user's organization as it was", async () => {
      const { token, org } = await onboardedUser();
      const { key } = await api.createApiKey(token, org.id, ["prompts:read"]);
      for (const credential of [{ token: key }, { apiKey: key }]) {
        expectError(await api.post("/api/onboarding/complete", body, credential), 403, "permission_denied");
      }
      const repeat = await api.onboard(token);
      expect(repeat.status).toBe(200);
      expect(repeat.organization).toEqual(org);
    });
  });

  describe("API keys", () => {
    const cases: BadRequest[] = [
      {
        name: "malformed JSON",
        send: (c, { subject: orgId, token }) =>
          c.request("POST", "/api/api-keys", {
            token,
            rawBody: `{"organizationId":"${orgId}","name":"x","scopes":[`,
            headers: json,
          }),
        status: 400,
        code: "invalid_argument",
      },
      {
        name: "a text/plain body",
        send: (c, { subject: orgId, token }) =>
          c.request("POST", "/api/api-keys", {
            token,
            rawBody: JSON.stringify({ organizationId: orgId, name: "x", scopes: ["prompts:read"] }),
            headers: { "content-type": "text/plain" },
          }),
        status: 400,
        code: "invalid_argument",
      },
      {
        name: "an unknown field",
        send: (c, { subject: orgId, token }) =>
          c.post(
            "/api/api-keys",
            { organizationId: orgId, name: "x", scopes: ["prompts:read"], secret: "mine" },
            { token },
          ),
        status: 400,
        code: "invalid_argument",
        field: "secret",
      },
      {
        name: "missing scopes",
        send: (c, { subject: orgId, token }) =>
          c.post("/api/api-keys", { organizationId: orgId, name: "x" }, { token }),
        status: 400,
        code: "invalid_argument",
        field: "scopes",
      },
      {
        name: "scopes as a string",
        send: (c, { subject: orgId, token }) =>
          c.post("/api/api-keys", { organizationId: orgId, name: "x", scopes: "prompts:read" }, { token }),
        status: 400,
        code: "invalid_argument",
        field: "scopes",
      },
      {
        name: "no scopes",
        send: (c, { subject: orgId, token }) =>
          c.post("/api/api-keys", { organizationId: orgId, name: "x", scopes: [] }, { token }),
        status: 400,
        code: "invalid_argument",
        field: "scopes",
      },
      {
        name: "an unknown scope",
        send: (c, { subject: orgId, token }) =>
          c.post(
            "/api/api-keys",
            { organizationId: orgId, name: "x", scopes: ["prompts:read", "admin:all"] },
            { token },
          ),
        status: 400,
        code: "invalid_argument",
        field: "scopes[1]",
      },
      {
        name: "a mistyped organizationId",
        send: (c, { token }) =>
          c.post("/api/api-keys", { organizationId: 7, name: "x", scopes: ["prompts:read"] }, { token }),
        status: 400,
        code: "invalid_argument",
        field: "organizationId",
      },
      {
        name: "a body over 1 MiB",
        send: (c, { subject: orgId, token }) =>
          c.post(
            "/api/api-keys",
            { organizationId: orgId, name: "x".repeat(MIB), scopes: ["prompts:read"] },
            { token },
          ),
        status: 413,
        code: "payload_too_large",
      },
      {
        name: "an unknown organization",
        send: (c, { token }) =>
          c.post(
            "/api/api-keys",
            { organizationId: "org_0000000000000000000000000000dead", name: "x", scopes: ["prompts:read"] },
            { token },
          ),
        status: 404,
        code: "not_found",
      },
      {
        name: "an API key as the credential",
        send: (c, { subject: orgId, key }) =>
          c.post("/api/api-keys", { organizationId: orgId, name: "x", scopes: ["prompts:read"] }, { token: key }),
        status: 403,
        code: "permission_denied",
      },
    ];

    it.each(cases)(
      "refuses to create a key with $name ($status) and creates none",
      async ({ send, status, code, field }) => {
        const { token, org } = await onboardedUser();
        const { key } = await api.createApiKey(token, org.id, ["prompts:read", "prompts:write"]);
        const before = await keysOf(api, token, org.id);
        expectError(await send(api, { subject: org.id, token, key }), status, code, field);
        expect(await keysOf(api, token, org.id)).toEqual(before);
        expect((await verify(api, { apiKey: key })).body.ok).toBe(true);
      },
    );

    it("refuses bad list queries", async () => {
      const { token, org } = await onboardedUser();
      expectError(await api.get("/api/api-keys", { token }), 400, "invalid_argument", "organizationId");
      for (const limit of ["0", "abc", "-1", "1.5", "201"]) {
        expectError(
          await api.get("/api/api-keys", { token, query: { organizationId: org.id, limit } }),
          400,
          "invalid_argument",
          "limit",
        );
      }
      expectError(
        await api.get("/api/api-keys", { token, query: { organizationId: org.id, cursor: "not-a-cursor" } }),
        400,
        "invalid_argument",
        "cursor",
      );
      expectError(
        await api.get("/api/api-keys", { token, query: { organizationId: "org_0000000000000000000000000000dead" } }),
        404,
        "not_found",
      );
    });

    it("refuses key management with an API key (403) and leaves the keys as they were", async () => {
      const { token, org } = await onboardedUser();
      const { id: keyId, key } = await api.createApiKey(token, org.id, ["prompts:read", "prompts:write"]);
      const before = await keysOf(api, token, org.id);
      expectError(
        await api.get("/api/api-keys", { apiKey: key, query: { organizationId: org.id } }),
        403,
        "permission_denied",
      );
      expectError(await api.delete(`/api/api-keys/${keyId}`, { apiKey: key }), 403, "permission_denied");
      expect(await keysOf(api, token, org.id)).toEqual(before);
      expect((await verify(api, { apiKey: key })).body.ok).toBe(true);
    });

    it("hides another organization's keys from a non-member (404) and leaves them working", async () => {
      const owner = await onboardedUser();
      const { id: keyId, key } = await api.createApiKey(owner.token, owner.org.id, ["prompts:read"]);
      const before = await keysOf(api, owner.token, owner.org.id);
      const stranger = await onboardedUser();
      const s = stranger.token;
      expectError(
        await api.post(
          "/api/api-keys",
          { organizationId: owner.org.id, name: "x", scopes: ["prompts:read"] },
          { token: s },
        ),
        404,
        "not_found",
      );
      expectError(
        await api.get("/api/api-keys", { token: s, query: { organizationId: owner.org.id } }),
        404,
        "not_found",
      );
      expectError(await api.delete(`/api/api-keys/${keyId}`, { token: s }), 404, "not_found");
      expectError(
        await api.delete("/api/api-keys/key_0000000000000000000000000000dead", { token: s }),
        404,
        "not_found",
      );
      expect(await keysOf(api, owner.token, owner.org.id)).toEqual(before);
      expect((await verify(api, { apiKey: key })).body.ok).toBe(true);

      const setup = await verify(api, { token: s }, owner.org.id);
      expect(setup.status).toBe(200);
      expect(setup.body).toMatchObject({ ok: false, organization: null });
      expect(setup.body.checks.map((ch) => [ch.name, ch.ok])).toEqual([
        ["authentication", true],
        ["organization", false],
      ]);
    });
  });

  describe("setup verification", () => {
    it("answers an unknown organization with ok: false and a failed organization check", async () => {
      const { token, org } = await onboardedUser();
      const { key } = await api.createApiKey(token, org.id, ["prompts:read"]);
      for (const credential of [{ token }, { apiKey: key }]) {
        const res = await verify(api, credential, "org_0000000000000000000000000000dead");
        expect(res.status, res.text).toBe(200);
        expect(res.body.ok).toBe(false);
        expect(res.body.organization).toBeNull();
        expect(res.body.checks[0]).toMatchObject({ name: "authentication", ok: true });
        expect(res.body.checks.find((ch) => ch.name === "organization")).toMatchObject({
          ok: false,
          message: expect.any(String),
        });
      }
    });

    it("answers a key of another organization with ok: false", async () => {
      const a = await onboardedUser();
      const b = await onboardedUser();
      const { key } = await api.createApiKey(b.token, b.org.id, ["prompts:read"]);
      const res = await verify(api, { apiKey: key }, a.org.id);
      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject({ ok: false, organization: null, principal: { type: "api_key" } });
      expect(res.body.checks.find((ch) => ch.name === "organization")?.ok).toBe(false);
      // Its own organization still verifies.
      expect((await verify(api, { apiKey: key }, b.org.id)).body.ok).toBe(true);
    });

    it("refuses malformed bodies", async () => {
      const { token } = await onboardedUser();
      expectError(
        await api.post("/api/setup/verify", { organizationId: 5 }, { token }),
        400,
        "invalid_argument",
        "organizationId",
      );
      expectError(
        await api.post("/api/setup/verify", { organizationId: "" }, { token }),
        400,
        "invalid_argument",
        "organizationId",
      );
      expectError(await api.post("/api/setup/verify", { orgId: "org_x" }, { token }), 400, "invalid_argument", "orgId");
      expectError(
        await api.request("POST", "/api/setup/verify", { token, rawBody: "{", headers: json }),
        400,
        "invalid_argument",
      );
    });
  });

  describe("credentials", () => {
    let victim: Awaited<ReturnType<typeof onboardedUser>>;
    let victimKey: CreatedApiKey;
    beforeAll(async () => {
      victim = await onboardedUser();
      victimKey = await api.createApiKey(victim.token, victim.org.id, ["prompts:read"]);
    });

    /** Each bad credential on a route of every stability, and the victim's access is untouched. */
    async function expectRefused(headers: Record<string, string>, message?: RegExp) {
      for (const res of [
        await api.post("/api/setup/verify", {}, { headers }),
        await api.get("/api/models", { headers }),
        await api.post("/api/onboarding/complete", { fullName: "x", organizationName: "y" }, { headers }),
        await api.get("/api/api-keys", { headers, query: { organizationId: victim.org.id } }),
      ]) {
        const error = expectError(res, 401, "unauthenticated");
        if (message) expect(error.message).toMatch(message);
      }
      expect((await verify(api, { token: victim.token })).body.ok).toBe(true);
      expect(await keysOf(api, victim.token, victim.org.id)).toHaveLength(1);
    }

    it("refuses a request without credentials (401 with WWW-Authenticate)", async () => {
      await expectRefused({});
      await expectRefused({ authorization: "Basic dXNlcjpwYXNz" });
      await expectRefused({ authorization: "Bearer" });
    });

    it("refuses malformed tokens", async () => {
      await expectRefused({ authorization: "Bearer not-a-jwt" }, /malformed/);
      await expectRefused({ authorization: "Bearer a.b.c" });
    });

    it("refuses a token signed by another key, even with the issuer's key id", async () => {
      const header = decodeProtectedHeader(victim.token);
      const claims = decodeJwt(victim.token);
      const { privateKey } = await generateKeyPair("ES256");
      for (const kid of [header.kid, undefined, "other"]) {
        const forged = await new SignJWT({ ...claims, exp: Math.floor(Date.now() / 1000) + 600 })
          .setProtectedHeader({ alg: "ES256", typ: "at+jwt", ...(kid ? { kid } : {}) })
          .sign(privateKey);
        await expectRefused({ authorization: `Bearer ${forged}` }, /invalid/);
      }
    });

    it("refuses a token whose payload was changed after signing", async () => {
      const other = await api.signUp();
      const [h, , s] = victim.token.split(".");
      const payload = b64url({ ...decodeJwt(victim.token), sub: other.user.id });
      await expectRefused({ authorization: `Bearer ${h}.${payload}.${s}` });
    });

    it("refuses a token with alg none and one with HS256", async () => {
      const claims = { ...decodeJwt(victim.token), exp: Math.floor(Date.now() / 1000) + 600 };
      await expectRefused({ authorization: `Bearer ${unsecuredJwt({ alg: "none", typ: "at+jwt" }, claims)}` });
      const hs = await new SignJWT(claims)
        .setProtectedHeader({ alg: "HS256", typ: "at+jwt" })
        .sign(new TextEncoder().encode("a shared secret of thirty-two bytes!"));
      await expectRefused({ authorization: `Bearer ${hs}` });
    });

    it("refuses unknown and tampered API keys in both headers", async () => {
      const secret = victimKey.key.split("_").at(-1) ?? "";
      const tampered = `${victimKey.key.slice(0, -secret.length)}${secret.slice(0, -1)}${secret.endsWith("A") ? "B" : "A"}`;
      const unknown = `sk_${"0".repeat(32)}_${secret}`;
      for (const key of [tampered, unknown, "sk_", "sk_nothing_here"]) {
        await expectRefused({ authorization: `Bearer ${key}` });
        await expectRefused({ "x-api-key": key });
      }
      expect((await verify(api, { apiKey: victimKey.key })).body.ok).toBe(true);
    });
  });
});

describe("headers", () => {
  /** One request of each kind of answer: 200, 201, 400, 401, 403, 404, 413, and Fastify's own errors. */
  const requests: {
    name: string;
    send: (c: TestClient, headers: Record<string, string>) => Promise<TestResponse>;
    status: number;
  }[] = [
    { name: "the OpenAPI document", send: (c, headers) => c.get("/api/openapi.json", { headers }), status: 200 },
    { name: "a health check", send: (c, headers) => c.get("/healthz", { headers }), status: 200 },
    { name: "the JWKS", send: (c, headers) => c.get("/.well-known/jwks.json", { headers }), status: 200 },
    {
      name: "a sign-up",
      send: (c, headers) =>
        c.post("/api/auth/signup", { email: `h-${randomUUID()}@example.test`, password: TEST_PASSWORD }, { headers }),
      status: 201,
    },
    {
      name: "malformed JSON",
      send: (c, headers) =>
        c.request("POST", "/api/auth/token", {
          rawBody: "{",
          headers: { ...headers, "content-type": "application/json" },
        }),
      status: 400,
    },
    { name: "a missing credential", send: (c, headers) => c.get("/api/models", { headers }), status: 401 },
    { name: "an unknown /api route", send: (c, headers) => c.get("/api/nothing-here", { headers }), status: 404 },
    { name: "an unknown route outside /api", send: (c, headers) => c.get("/nothing-here", { headers }), status: 404 },
    {
      name: "a method the route does not have",
      send: (c, headers) => c.request("PUT", "/api/models", { headers }),
      status: 404,
    },
    { name: "a malformed URL", send: (c, headers) => c.get("/api/%zz", { headers }), status: 400 },
    {
      name: "a body over 1 MiB",
      send: (c, headers) => c.post("/api/auth/token", { email: "x".repeat(MIB), password: "x" }, { headers }),
      status: 413,
    },
  ];

  describe.each(transports)("over %s", (transport) => {
    it.each(requests)("gives $name a fresh x-request-id", async ({ send, status }) => {
      const c = clientOf(transport);
      const [a, b] = [await send(c, {}), await send(c, {})];
      expect(a.status, a.text).toBe(status);
      expect(a.headers["x-request-id"]).toMatch(/^[\w.:-]{1,128}$/);
      expect(b.headers["x-request-id"]).toMatch(/^[\w.:-]{1,128}$/);
      expect(a.headers["x-request-id"]).not.toBe(b.headers["x-request-id"]);
      if (status >= 400) expectError(a, status, (a.body as ErrorBody).error.code);
    });

    it.each(requests)("echoes the x-request-id sent with $name", async ({ send, status }) => {
      const sent = `trace-${randomUUID()}:1.2`;
      const res = await send(clientOf(transport), { "x-request-id": sent });
      expect(res.status, res.text).toBe(status);
      expect(res.headers["x-request-id"]).toBe(sent);
      if (status >= 400) expect((res.body as ErrorBody).error.requestId).toBe(sent);
    });
  });

  it("replaces a sent x-request-id that is not a plain token", async () => {
    for (const sent of ["has spaces in it", "x".repeat(129), "semi;colon", ""]) {
      const res = await api.get("/api/nothing-here", { headers: { "x-request-id": sent } });
      expect(res.headers["x-request-id"]).toMatch(/^[\w.:-]{1,128}$/);
      expect(res.headers["x-request-id"]).not.toBe(sent);
      expect((res.body as ErrorBody).error.requestId).toBe(res.headers["x-request-id"]);
    }
  });

  it("marks every /api response with its stability class, errors included", async () => {
    const { token, org } = await onboardedUser();
    const key = await api.createApiKey(token, org.id, ["prompts:read"]);
    const cases: [string, () => Promise<TestResponse>, number, string][] = [
      ["setup/verify", () => verify(api, { token }), 200, "stable"],
      ["setup/verify unauthenticated", () => verify(api, {}), 401, "stable"],
      ["models", () => api.get("/api/models", { token }), 200, "stable"],
      ["models unauthenticated", () => api.get("/api/models"), 401, "stable"],
      [
        "onboarding",
        () => api.post("/api/onboarding/complete", { fullName: "A", organizationName: "B" }, { token }),
        200,
        "beta",
      ],
      ["onboarding invalid", () => api.post("/api/onboarding/complete", { fullName: "A" }, { token }), 400, "beta"],
      [
        "sign-up",
        () => api.post("/api/auth/signup", { email: `s-${randomUUID()}@example.test`, password: TEST_PASSWORD }),
        201,
        "non-public",
      ],
      ["token", () => api.post("/api/auth/token", { email: "nobody@example.test", password: "x" }), 401, "non-public"],
      [
        "api-keys create",
        () => api.post("/api/api-keys", { organizationId: org.id, name: "k", scopes: ["runs:read"] }, { token }),
        201,
        "non-public",
      ],
      [
        "api-keys list",
        () => api.get("/api/api-keys", { token, query: { organizationId: org.id } }),
        200,
        "non-public",
      ],
      ["api-keys revoke", () => api.delete(`/api/api-keys/${key.id}`, { token }), 200, "non-public"],
      ["openapi", () => api.get("/api/openapi.json"), 200, "non-public"],
      ["jwks", () => api.get("/.well-known/jwks.json"), 200, "non-public"],
    ];
    for (const [name, send, status, stability] of cases) {
      const res = await send();
      expect(res.status, `${name}: ${res.text}`).toBe(status);
      expect(res.headers["x-api-stability"], name).toBe(stability);
    }
    const unknown = await api.get("/api/no-such-route", { token });
    expectError(unknown, 404, "not_found");
    expect(["stable", "beta", "non-public", "legacy"]).toContain(unknown.headers["x-api-stability"]);
  });
});

describe("the OpenAPI document", () => {
  /** Every route the app registered, from its route tree (Fastify has no other public listing). */
  function registeredRoutes(): { method: string; url: string }[] {
    const routes: { method: string; url: string }[] = [];
    const segments: string[] = [];
    for (const line of kiln.gateway.app.printRoutes({ commonPrefix: false }).split("\n")) {
      const m = /^((?:│ {3}| {4})*)(?:├── |└── )(\S+?)(?: \(([A-Z, ]+)\))?$/.exec(line);
      if (!m?.[2]) continue;
      segments.length = (m[1] ?? "").length / 4;
      segments.push(m[2]);
      for (const method of m[3]?.split(", ") ?? []) routes.push({ method, url: segments.join("") });
    }
    return routes;
  }

  it("is served without credentials as OpenAPI 3.1 with the ErrorEnvelope schema", async () => {
    const res = await http.get<{
      openapi: string;
      info: { title: string };
      components: { schemas: Record<string, unknown> };
    }>("/api/openapi.json");
    expect(res.status, res.text).toBe(200);
    expect(res.headers["content-type"]).toMatch(/^application\/json/);
    expect(res.body.openapi).toBe("3.1.0");
    expect(res.body.info.title).toEqual(expect.any(String));
    expect(res.body.components.schemas.ErrorEnvelope).toMatchObject({
      type: "object",
      required: ["error"],
      properties: {
        error: {
          type: "object",
          required: expect.arrayContaining(["code", "message", "details", "requestId"]),
        },
      },
    });
  });

  it("documents every registered /api (and SAML SP) route with its method, and nothing else", async () => {
    type Operation = {
      security?: unknown[];
      responses: Record<string, { content?: Record<string, { schema?: { $ref?: string } }> }>;
    };
    const doc = (await api.get<{ paths: Record<string, Record<string, Operation>> }>("/api/openapi.json")).body;
    const routes = registeredRoutes().filter((r) => r.method !== "HEAD" && /^\/(api|\.well-known|saml)\//.test(r.url));
    // The route tree parsed as expected: the known routes are among them.
    expect(routes).toEqual(
      expect.arrayContaining([
        { method: "POST", url: "/api/auth/signup" },
        { method: "POST", url: "/api/auth/token" },
        { method: "GET", url: "/.well-known/jwks.json" },
        { method: "POST", url: "/api/onboarding/complete" },
        { method: "POST", url: "/api/setup/verify" },
        { method: "POST", url: "/api/api-keys" },
        { method: "GET", url: "/api/api-keys" },
        { method: "DELETE", url: "/api/api-keys/:id" },
        { method: "GET", url: "/api/models" },
      ]),
    );
    const documented = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((method) => ({ method: method.toUpperCase(), url: path.replace(/\{(\w+)\}/g, ":$1") })),
    );
    const key = (r: { method: string; url: string }) => `${r.method} ${r.url}`;
    expect(documented.map(key).sort()).toEqual(routes.map(key).sort());

    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const isPublic = Array.isArray(op.security) && op.security.length === 0;
        if (isPublic) continue;
        expect(op.responses["401"]?.content?.["application/json"]?.schema?.$ref, `${method} ${path}`).toBe(
          "#/components/schemas/ErrorEnvelope",
        );
      }
    }
  });
});

describe("an external OIDC issuer", () => {
  // First in this block: the gateway fetches the issuer's keys on first use and then caches them.
  it("answers 503 unavailable while the issuer's keys cannot be fetched, then accepts the token", async () => {
    expect(jwksFetches, "the key set was fetched before this test").toBe(0);
    const token = await signOidc({ sub: `auth0|${randomUUID()}` });
    try {
      for (const mode of ["reset", "error"] as const) {
        jwksMode = mode;
        const error = expectError(await verify(api, { token }), 503, "unavailable");
        expect(error.message).toMatch(/OIDC/);
      }
    } finally {
      jwksMode = "up";
    }
    expect(jwksFetches).toBe(2);
    expect((await verify(api, { token })).status).toBe(200);
  });

  it("makes an unknown subject a user on first sight, who can onboard, and keeps them on later tokens", async () => {
    const subject = `auth0|${randomUUID()}`;
    const email = `oidc-${randomUUID()}@example.test`;
    const first = await signOidc({ sub: subject, email, name: "Grace Hopper" });
    const before = await verify(api, { token: first });
    expect(before.status, before.text).toBe(200);
    expect(before.body.principal).toEqual({ type: "user", id: expect.stringMatching(id("usr")) });
    expect(before.body.checks[0]).toMatchObject({ name: "authentication", ok: true });
    // Not onboarded yet.
    expect(before.body).toMatchObject({ ok: false, organization: null });

    const onboarding = await api.onboard(first, "Navy");
    expect(onboarding.status).toBe(201);
    expect(onboarding.user).toMatchObject({ id: before.body.principal.id, email });
    expect(onboarding.membership.role).toBe("owner");

    const second = await signOidc({ sub: subject, email });
    expect(second).not.toBe(first);
    const after = await verify(api, { token: second });
    expect(after.body.ok).toBe(true);
    expect(after.body.principal.id).toBe(before.body.principal.id);
    expect(after.body.organization?.id).toBe(onboarding.organization.id);
    const repeat = await api.onboard(second);
    expect(repeat.status).toBe(200);
    expect(repeat.organization.id).toBe(onboarding.organization.id);

    // Another subject is another user.
    const stranger = await verify(api, { token: await signOidc({ sub: `auth0|${randomUUID()}` }) });
    expect(stranger.body.principal.id).not.toBe(before.body.principal.id);
  });

  it("links a first sign-in with a verified address to the user SCIM provisioned for it, and no other", async () => {
    const owner = await api.signUp();
    const organizationId = (await api.onboard(owner.accessToken)).organization.id;
    const made = await api.post<{ token: string }>(
      `/api/organizations/${organizationId}/scim-tokens`,
      { name: "Okta" },
      { token: owner.accessToken },
    );
    expect(made.status, made.text).toBe(201);
    const email = `provisioned-${randomUUID()}@example.test`;
    const provisioned = await api.post<{ id: string }>(
      "/scim/v2/Users",
      { userName: email, emails: [{ value: email, primary: true }] },
      { token: made.body.token },
    );
    expect(provisioned.status, provisioned.text).toBe(201);

    const unverified = await signOidc({ sub: `okta|${randomUUID()}`, email, email_verified: false });
    const stranger = await verify(api, { token: unverified }, organizationId);
    expect(stranger.body.principal.id).not.toBe(provisioned.body.id);
    expect(stranger.body.ok).toBe(false);
    const verified = await signOidc({ sub: `okta|${randomUUID()}`, email, email_verified: true });
    const linked = await verify(api, { token: verified }, organizationId);
    expect(linked.body.principal.id).toBe(provisioned.body.id);
    expect(linked.body).toMatchObject({ ok: true, organization: { id: organizationId } });
    // Linked once: another verified subject with the address is someone else.
    const another = await signOidc({ sub: `okta|${randomUUID()}`, email, email_verified: true });
    expect((await verify(api, { token: another })).body.principal.id).not.toBe(provisioned.body.id);
  });

  it("refuses an expired token (401, saying so)", async () => {
    const nowSeconds = Math.floor(Date.now() / 1000);
    const expired = await signOidc({ sub: `auth0|${randomUUID()}`, iat: nowSeconds - 3_600, exp: nowSeconds - 60 });
    const error = expectError(await verify(api, { token: expired }), 401, "unauthenticated");
    expect(error.message).toMatch(/expired/i);
  });

  it("refuses a wrong audience, a foreign issuer, an unknown key and alg none (401)", async () => {
    const sub = `auth0|${randomUUID()}`;
    const { privateKey } = await generateKeyPair("ES256");
    const tokens = [
      await signOidc({ sub, aud: "someone-else" }),
      await signOidc({ sub, iss: "https://evil.example.test/" }),
      await signOidc({ sub }, { key: privateKey }),
      await signOidc({ sub }, { key: privateKey, kid: "unknown-kid" }),
      unsecuredJwt(
        { alg: "none" },
        { iss: OIDC_ISSUER, aud: OIDC_AUDIENCE, sub, exp: Math.floor(Date.now() / 1000) + 600 },
      ),
    ];
    for (const token of tokens) expectError(await verify(api, { token }), 401, "unauthenticated");
    // The same subject with a good token is fine: nothing above was cached.
    expect((await verify(api, { token: await signOidc({ sub }) })).status).toBe(200);
  });
});
