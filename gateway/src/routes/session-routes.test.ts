import { createLogger } from "@kiln/kit/logger";
import { buildTestPlatform } from "@kiln/testing/platform";
import { createTestClient, type SignedUp, TEST_PASSWORD, type TestClient } from "@kiln/testing/test-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * The console's cookie session (docs/security.md "Console session") through app.inject(): the
 * cookie's attributes, the token never in a body, the CSRF header required on every write, the
 * cookie accepted on /api only, and sign-out.
 */

type Embedded = Awaited<ReturnType<typeof buildTestPlatform>>;

let kiln: Embedded;
let api: TestClient;
let user: SignedUp;
let organizationId: string;

const CSRF = { "x-kiln-csrf": "1" };

const inject = (
  method: "GET" | "POST" | "DELETE",
  url: string,
  options: { cookie?: string; headers?: Record<string, string>; body?: Record<string, unknown> } = {},
) =>
  kiln.gateway.app.inject({
    method,
    url,
    headers: { ...options.headers, ...(options.cookie ? { cookie: `kiln_session=${options.cookie}` } : {}) },
    ...(options.body === undefined ? {} : { payload: options.body }),
  });

/** Signs in through POST /api/session: the session cookie's value. */
async function signIn(): Promise<string> {
  const res = await inject("POST", "/api/session", {
    headers: CSRF,
    body: { email: user.email, password: TEST_PASSWORD },
  });
  expect(res.statusCode).toBe(201);
  const cookie = res.cookies.find((c) => c.name === "kiln_session");
  if (!cookie) throw new Error("no session cookie");
  return cookie.value;
}

beforeAll(async () => {
  kiln = await buildTestPlatform({ logger: createLogger({ name: "test", level: "silent" }) });
  api = createTestClient(kiln.gateway.app);
  user = await api.signUp();
  organizationId = (await api.onboard(user.accessToken)).organization.id;
});

afterAll(async () => {
  await kiln?.close();
});

describe("POST /api/session", () => {
  it("sets an httpOnly, SameSite=Strict cookie on /api and returns no token", async () => {
    const res = await inject("POST", "/api/session", {
      headers: CSRF,
      body: { email: user.email, password: TEST_PASSWORD },
    });
    expect(res.statusCode).toBe(201);
    const body = res.json() as Record<string, unknown>;
    expect(Object.keys(body)).toEqual(["expiresAt"]);
    expect(Date.parse(String(body.expiresAt))).toBeGreaterThan(Date.now());
    const header = String(res.headers["set-cookie"]);
    expect(header).toMatch(/^kiln_session=[\w.-]+;/);
    expect(header).toContain("HttpOnly");
    expect(header).toContain("SameSite=Strict");
    expect(header).toContain("Path=/api");
    expect(header).toContain("Expires=");
    // Plain http here: Secure would make the browser drop it.
    expect(header).not.toContain("Secure");
    expect(res.body).not.toContain(res.cookies[0]?.value);
  });

  it("refuses a sign-in without the CSRF header, and a wrong password, setting no cookie", async () => {
    const noHeader = await inject("POST", "/api/session", { body: { email: user.email, password: TEST_PASSWORD } });
    expect(noHeader.statusCode).toBe(403);
    expect(noHeader.json()).toMatchObject({ error: { code: "permission_denied" } });
    expect(noHeader.headers["set-cookie"]).toBeUndefined();
    const wrong = await inject("POST", "/api/session", {
      headers: CSRF,
      body: { email: user.email, password: "not-the-password" },
    });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.headers["set-cookie"]).toBeUndefined();
    const missing = await inject("POST", "/api/session", { headers: CSRF, body: { email: user.email } });
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toMatchObject({ error: { code: "invalid_argument", details: [{ field: "password" }] } });
  });
});

describe("the session cookie as a credential", () => {
  it("authenticates reads, and writes that carry the CSRF header", async () => {
    const cookie = await signIn();
    const members = await inject("GET", `/api/organizations/${organizationId}/members`, { cookie });
    expect(members.statusCode).toBe(200);
    expect(members.json()).toMatchObject({ data: [{ user: { id: user.user.id }, membership: { role: "owner" } }] });
    const verified = await inject("POST", "/api/setup/verify", { cookie, headers: CSRF, body: {} });
    expect(verified.statusCode).toBe(200);
    expect(verified.json()).toMatchObject({ principal: { type: "user", id: user.user.id } });
  });

  it("refuses a write without the CSRF header (what a cross-site form sends) and changes nothing", async () => {
    const cookie = await signIn();
    const keys = () => inject("GET", `/api/api-keys?organizationId=${organizationId}`, { cookie });
    const before = (await keys()).json() as { data: unknown[] };
    const body = { organizationId, name: "csrf", scopes: ["prompts:read"] };
    const write = await inject("POST", "/api/api-keys", { cookie, body });
    expect(write.statusCode).toBe(403);
    expect(write.json()).toMatchObject({
      error: { code: "permission_denied", message: expect.stringContaining("x-kiln-csrf") },
    });
    const wrongValue = await inject("POST", "/api/api-keys", { cookie, headers: { "x-kiln-csrf": "yes" }, body });
    expect(wrongValue.statusCode).toBe(403);
    expect(((await keys()).json() as { data: unknown[] }).data).toEqual(before.data);
    const allowed = await inject("POST", "/api/api-keys", { cookie, headers: CSRF, body });
    expect(allowed.statusCode).toBe(201);
  });

  it("is not accepted outside /api, nor when it is not a valid access token", async () => {
    const cookie = await signIn();
    expect((await inject("GET", "/v1/models", { cookie })).statusCode).toBe(401);
    const forged = await inject("GET", "/api/models", { cookie: "not-a-token" });
    expect(forged.statusCode).toBe(401);
    const key = await api.createApiKey(user.accessToken, organizationId, ["prompts:read"]);
    const keyCookie = await inject("GET", "/api/prompts", { cookie: key.key });
    expect(keyCookie.statusCode).toBe(401);
    expect(keyCookie.json()).toMatchObject({ error: { message: "a session cookie holds an access token only" } });
  });

  it("an Authorization header wins over the cookie", async () => {
    const other = await api.signUp();
    const cookie = await signIn();
    const verified = await inject("POST", "/api/setup/verify", {
      cookie,
      headers: { authorization: `Bearer ${other.accessToken}` },
      body: {},
    });
    expect(verified.json()).toMatchObject({ principal: { id: other.user.id } });
  });
});

describe("DELETE /api/session", () => {
  it("clears the cookie, with the CSRF header only", async () => {
    const cookie = await signIn();
    expect((await inject("DELETE", "/api/session", { cookie })).statusCode).toBe(403);
    const out = await inject("DELETE", "/api/session", { cookie, headers: CSRF });
    expect(out.statusCode).toBe(200);
    expect(out.json()).toEqual({ signedOut: true });
    const header = String(out.headers["set-cookie"]);
    expect(header).toMatch(/^kiln_session=;/);
    expect(header).toContain("Expires=Thu, 01 Jan 1970");
    expect(header).toContain("Path=/api");
  });
});
