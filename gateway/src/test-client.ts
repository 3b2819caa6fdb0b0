/**
 * A small REST client for tests: the same calls against `app.inject()` (no socket) or a real base
 * URL (fetch), answering `{ status, headers, body }`, plus the identity flow of api.md
 * ("Authentication", "Identity") as helpers. Not a test itself; the end-to-end suites reuse it.
 */
import { randomUUID } from "node:crypto";
import type { FastifyInstance, HTTPMethods } from "fastify";

export type Method = "GET" | "HEAD" | "POST" | "PUT" | "PATCH" | "DELETE" | "OPTIONS";

/** Anything with Fastify's `inject()`: the gateway app itself. */
export type Injectable = Pick<FastifyInstance, "inject">;

export interface RequestOptions {
  /** Sent as JSON with `Content-Type: application/json` (unless `headers` says otherwise). */
  body?: unknown;
  /** Sent as it is, without a default Content-Type: for malformed or non-JSON bodies. */
  rawBody?: string | Buffer;
  /** `Authorization: Bearer <token>`: an access token or an API key. */
  token?: string;
  /** `X-API-Key: <key>`. */
  apiKey?: string;
  query?: Record<string, string | number | undefined>;
  /** Extra headers; they win over the ones the options above set. */
  headers?: Record<string, string>;
}

export interface TestResponse<T = unknown> {
  status: number;
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  /** Parsed JSON when the response is JSON, else the text (undefined when empty). */
  body: T;
  text: string;
}

export interface User {
  id: string;
  email: string;
  fullName: string;
}

export interface Organization {
  id: string;
  name: string;
  plan: string;
  entitlements: { aiEnabled: boolean; monthlyRunLimit: number };
  createdAt: string;
}

export interface Membership {
  organizationId: string;
  userId: string;
  role: "owner" | "admin" | "member";
  permissions: string[];
  createdAt: string;
}

export interface SignUpResult {
  user: User;
  accessToken: string;
  expiresAt: string;
}

/** What `signUp` returns: the 201 body plus the credentials it used. */
export interface SignedUp extends SignUpResult {
  email: string;
  password: string;
}

export interface TokenResult {
  accessToken: string;
  expiresAt: string;
}

export interface OnboardingResult {
  user: User;
  organization: Organization;
  membership: Membership;
}

export interface ApiKey {
  id: string;
  name: string;
  scopes: string[];
  organizationId: string;
  createdByUserId: string;
  createdAt: string;
  revokedAt: string | null;
}

export interface CreatedApiKey {
  id: string;
  name: string;
  scopes: string[];
  organizationId: string;
  /** `sk_<key id without its prefix>_<secret>`, shown once. */
  key: string;
  createdAt: string;
}

export interface SetupCheck {
  name: "authentication" | "organization" | "ai_entitlement" | "ai_permission";
  ok: boolean;
  message?: string;
}

export interface SetupVerifyResult {
  ok: boolean;
  principal: { type: "user" | "api_key"; id: string; scopes?: string[] };
  organization: Organization | null;
  checks: SetupCheck[];
}

export interface Model {
  id: string;
  provider: string;
  model: string;
  available: boolean;
  capabilities: { tools: boolean; jsonSchema: boolean };
  pricing: { inputPerMTokUsd: number | null; outputPerMTokUsd: number | null };
}

export interface List<T> {
  data: T[];
  nextCursor: string | null;
}

export interface ErrorBody {
  error: { code: string; message: string; details: { field: string; issue: string }[]; requestId: string };
}

export const TEST_PASSWORD = "correct-horse-battery-staple";

export interface TestClient {
  request<T = unknown>(method: Method, path: string, options?: RequestOptions): Promise<TestResponse<T>>;
  get<T = unknown>(path: string, options?: RequestOptions): Promise<TestResponse<T>>;
  post<T = unknown>(path: string, body?: unknown, options?: RequestOptions): Promise<TestResponse<T>>;
  delete<T = unknown>(path: string, options?: RequestOptions): Promise<TestResponse<T>>;
  /** POST /api/auth/signup with a fresh address unless one is given; throws unless 201. */
  signUp(email?: string, options?: { password?: string; fullName?: string }): Promise<SignedUp>;
  /** POST /api/auth/token; throws unless 200. */
  token(email: string, password?: string): Promise<TokenResult>;
  /** POST /api/onboarding/complete; throws unless 201 (first time) or 200 (repeat). */
  onboard(token: string, organizationName?: string): Promise<OnboardingResult & { status: 200 | 201 }>;
  /** POST /api/api-keys; throws unless 201. */
  createApiKey(token: string, organizationId: string, scopes: string[], name?: string): Promise<CreatedApiKey>;
}

interface RawRequest {
  method: Method;
  url: string;
  headers: Record<string, string>;
  payload: string | Buffer | undefined;
}

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  text: string;
}

type Send = (request: RawRequest) => Promise<RawResponse>;

function flattenHeaders(headers: Record<string, string | string[] | number | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    out[name.toLowerCase()] = Array.isArray(value) ? value.join(", ") : String(value);
  }
  return out;
}

function sendWithInject(app: Injectable): Send {
  return async (r) => {
    const res = await app.inject({
      method: r.method as HTTPMethods,
      url: r.url,
      headers: r.headers,
      ...(r.payload === undefined ? {} : { payload: r.payload }),
    });
    return { status: res.statusCode, headers: flattenHeaders(res.headers), text: res.body };
  };
}

function sendWithFetch(baseUrl: string): Send {
  return async (r) => {
    const res = await fetch(new URL(r.url, baseUrl), {
      method: r.method,
      headers: r.headers,
      body: r.payload,
      redirect: "manual",
    });
    const headers: Record<string, string> = {};
    res.headers.forEach((value, name) => {
      headers[name] = value;
    });
    return { status: res.status, headers, text: await res.text() };
  };
}

function parseBody(headers: Record<string, string>, text: string): unknown {
  if (text === "") return undefined;
  if (!/\bjson\b/i.test(headers["content-type"] ?? "")) return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function expectStatus(what: string, res: TestResponse, ...statuses: number[]): void {
  if (!statuses.includes(res.status)) {
    throw new Error(`${what}: expected ${statuses.join(" or ")}, got ${res.status}: ${res.text}`);
  }
}

/** A client for `app.inject()` (pass the Fastify app) or a running gateway (pass its base URL). */
export function createTestClient(target: string | URL | Injectable): TestClient {
  const send =
    typeof target === "string" || target instanceof URL ? sendWithFetch(String(target)) : sendWithInject(target);

  async function request<T = unknown>(
    method: Method,
    path: string,
    options: RequestOptions = {},
  ): Promise<TestResponse<T>> {
    const headers: Record<string, string> = {};
    let payload: string | Buffer | undefined;
    if (options.rawBody !== undefined) payload = options.rawBody;
    else if (options.body !== undefined) {
      payload = JSON.stringify(options.body);
      headers["content-type"] = "application/json";
    }
    if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
    if (options.apiKey !== undefined) headers["x-api-key"] = options.apiKey;
    for (const [name, value] of Object.entries(options.headers ?? {})) headers[name.toLowerCase()] = value;
    let url = path;
    const query = Object.entries(options.query ?? {}).filter((e): e is [string, string | number] => e[1] !== undefined);
    if (query.length > 0) {
      url +=
        (url.includes("?") ? "&" : "?") +
        new URLSearchParams(query.map(([k, v]): [string, string] => [k, String(v)])).toString();
    }
    const res = await send({ method, url, headers, payload });
    return { status: res.status, headers: res.headers, body: parseBody(res.headers, res.text) as T, text: res.text };
  }

  const client: TestClient = {
    request,
    get: (path, options) => request("GET", path, options),
    post: (path, body, options) => request("POST", path, { ...options, body }),
    delete: (path, options) => request("DELETE", path, options),

    async signUp(email = `user-${randomUUID()}@example.test`, options = {}) {
      const password = options.password ?? TEST_PASSWORD;
      const body = { email, password, ...(options.fullName === undefined ? {} : { fullName: options.fullName }) };
      const res = await client.post<SignUpResult>("/api/auth/signup", body);
      expectStatus("sign-up", res, 201);
      return { ...res.body, email, password };
    },

    async token(email, password = TEST_PASSWORD) {
      const res = await client.post<TokenResult>("/api/auth/token", { email, password });
      expectStatus("token", res, 200);
      return res.body;
    },

    async onboard(token, organizationName = `Org ${randomUUID().slice(0, 8)}`) {
      const res = await client.post<OnboardingResult>(
        "/api/onboarding/complete",
        { fullName: "Test User", organizationName },
        { token },
      );
      expectStatus("onboarding", res, 200, 201);
      return { ...res.body, status: res.status as 200 | 201 };
    },

    async createApiKey(token, organizationId, scopes, name = "test key") {
      const res = await client.post<CreatedApiKey>("/api/api-keys", { organizationId, name, scopes }, { token });
      expectStatus("API key creation", res, 201);
      return res.body;
    },
  };
  return client;
}
