/**
 * The identity flow of the README's quickstart, over real HTTP, with the checks every run mode
 * must pass: sign up, onboard (twice), verify, create an API key, verify with it, list, revoke.
 */
import { randomBytes } from "node:crypto";
import { expect } from "vitest";

export interface JsonResponse<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: T;
}

// biome-ignore lint/suspicious/noExplicitAny: test responses are read loosely and asserted on.
type Loose = any;

export async function call(
  base: string,
  method: string,
  path: string,
  options: { body?: unknown; token?: string; apiKey?: string; headers?: Record<string, string> } = {},
): Promise<JsonResponse<Loose>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.body !== undefined) headers["content-type"] = "application/json";
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.apiKey) headers["x-api-key"] = options.apiKey;
  const res = await fetch(`${base}${path}`, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
}

export interface FlowResult {
  token: string;
  userId: string;
  organizationId: string;
  apiKey: string;
  apiKeyId: string;
}

export const uniqueEmail = () => `user-${randomBytes(6).toString("hex")}@example.com`;

/** Runs the whole flow against `base`, asserting the contract at every step. */
export async function runIdentityFlow(base: string, scopes = ["prompts:read", "runs:write"]): Promise<FlowResult> {
  const email = uniqueEmail();
  const signup = await call(base, "POST", "/api/auth/signup", {
    body: { email, password: "correct-horse-battery", fullName: "Ada Lovelace" },
  });
  expect(signup.status).toBe(201);
  expect(signup.body.user).toMatchObject({ email, fullName: "Ada Lovelace" });
  expect(signup.body.user.id).toMatch(/^usr_[0-9a-f]{32}$/);
  expect(Date.parse(signup.body.expiresAt)).toBeGreaterThan(Date.now());

  const token = await call(base, "POST", "/api/auth/token", { body: { email, password: "correct-horse-battery" } });
  expect(token.status).toBe(200);
  const accessToken: string = token.body.accessToken;

  const onboard = await call(base, "POST", "/api/onboarding/complete", {
    token: accessToken,
    body: { fullName: "Ada Lovelace", organizationName: "Analytical Engines" },
  });
  expect(onboard.status).toBe(201);
  expect(onboard.headers.get("x-api-stability")).toBe("beta");
  expect(onboard.body.organization).toMatchObject({
    name: "Analytical Engines",
    plan: "free",
    entitlements: { aiEnabled: true },
  });
  expect(onboard.body.membership).toMatchObject({ role: "owner" });
  expect(onboard.body.membership.permissions).toContain("ai_platform");
  const organizationId: string = onboard.body.organization.id;

  const again = await call(base, "POST", "/api/onboarding/complete", {
    token: accessToken,
    body: { fullName: "Ada Lovelace", organizationName: "Another name" },
  });
  expect(again.status).toBe(200);
  expect(again.body.organization.id).toBe(organizationId);

  const verify = await call(base, "POST", "/api/setup/verify", { token: accessToken, body: { organizationId } });
  expect(verify.status).toBe(200);
  expect(verify.headers.get("x-api-stability")).toBe("stable");
  expect(verify.body).toMatchObject({ ok: true, principal: { type: "user", id: signup.body.user.id } });
  expect(verify.body.checks.map((c: { name: string; ok: boolean }) => [c.name, c.ok])).toEqual([
    ["authentication", true],
    ["organization", true],
    ["ai_entitlement", true],
    ["ai_permission", true],
  ]);

  const created = await call(base, "POST", "/api/api-keys", {
    token: accessToken,
    body: { organizationId, name: "ci", scopes },
  });
  expect(created.status).toBe(201);
  expect(created.body).toMatchObject({ name: "ci", scopes, organizationId });
  expect(created.body.key).toMatch(/^sk_[0-9a-f]{32}_[0-9A-Za-z]{43}$/);

  const withKey = await call(base, "POST", "/api/setup/verify", { token: created.body.key });
  expect(withKey.status).toBe(200);
  expect(withKey.body).toMatchObject({
    ok: true,
    principal: { type: "api_key", id: created.body.id, scopes },
    organization: { id: organizationId },
  });
  const withHeader = await call(base, "POST", "/api/setup/verify", { apiKey: created.body.key, body: {} });
  expect(withHeader.status).toBe(200);

  const list = await call(base, "GET", `/api/api-keys?organizationId=${organizationId}`, { token: accessToken });
  expect(list.status).toBe(200);
  expect(list.body.nextCursor).toBeNull();
  expect(list.body.data).toHaveLength(1);
  expect(JSON.stringify(list.body)).not.toContain(created.body.key.split("_")[2]);

  const models = await call(base, "GET", "/api/models", { token: created.body.key });
  expect(models.status).toBe(200);
  expect(models.body.data).toContainEqual(
    expect.objectContaining({
      id: "local/echo",
      available: true,
      pricing: { inputPerMTokUsd: 0, outputPerMTokUsd: 0 },
    }),
  );

  return {
    token: accessToken,
    userId: signup.body.user.id,
    organizationId,
    apiKey: created.body.key,
    apiKeyId: created.body.id,
  };
}

/** Polls until `probe` holds or `timeoutMs` passes; returns how long it took. */
export async function eventually(probe: () => Promise<boolean>, timeoutMs: number): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await probe()) return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error(`not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
