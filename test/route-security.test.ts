/**
 * The OpenAPI document's security entries say what each route takes, and the routes do what it
 * says (issue #45): every operation of the live document (so a new route is checked from the day it
 * exists) is called over real HTTP with a user's access token and with an API key of every scope;
 * a credential the operation declares is never refused for what it is (401, or the gateway's 403
 * for the wrong kind of credential), and one it does not declare is refused with 403
 * `permission_denied` before the route's body is read. Path ids name nothing, so no call changes
 * anything that the next one depends on.
 */
import { API_KEY_SCOPES } from "@kiln/contracts/api-key-scopes";
import { createTestClient, type Method, type TestClient } from "@kiln/testing/test-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmbedded } from "./support/embedded.js";

interface Operation {
  method: Method;
  path: string;
  security?: Record<string, string[]>[];
}

const WRONG_CREDENTIAL = /takes (a signed-in user's access token|an API key), not/;

let stop: () => Promise<void>;
let api: TestClient;
let token: string;
let apiKey: string;
let organizationId: string;
const operations: Operation[] = [];
let documentDefault: Record<string, string[]>[] = [];

beforeAll(async () => {
  const started = await startEmbedded({ rateLimitPerMinute: 0 });
  stop = () => started.kiln.close();
  api = createTestClient(started.baseUrl);
  ({ accessToken: token } = await api.signUp());
  ({
    organization: { id: organizationId },
  } = await api.onboard(token));
  apiKey = (await api.createApiKey(token, organizationId, [...API_KEY_SCOPES])).key;
  const doc = (
    await api.get<{
      security: Record<string, string[]>[];
      paths: Record<string, Record<string, { security?: Record<string, string[]>[] }>>;
    }>("/api/openapi.json")
  ).body;
  documentDefault = doc.security;
  for (const [path, byMethod] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(byMethod)) {
      if (!["get", "post", "put", "patch", "delete"].includes(method)) continue;
      operations.push({ method: method.toUpperCase() as Method, path, security: op.security });
    }
  }
}, 120_000);

afterAll(async () => {
  await stop?.();
});

/** The path with ids that name nothing, and the organization as the query's organizationId. */
const concrete = (path: string) => path.replace(/\{[^}]+\}/g, "nope_0000000000000000");

function declares(op: Operation, kind: "user" | "api_key"): boolean {
  const security = op.security ?? documentDefault;
  const schemes = kind === "user" ? ["accessToken"] : ["apiKeyBearer", "apiKeyHeader"];
  return security.some((entry) => Object.keys(entry).some((name) => schemes.includes(name)));
}

async function call(op: Operation, credential: { token?: string; apiKey?: string }) {
  const withBody = op.method === "POST" || op.method === "PUT" || op.method === "PATCH";
  return api.request(op.method, concrete(op.path), {
    ...credential,
    query: { organizationId },
    ...(withBody && { body: {} }),
  });
}

describe("the OpenAPI document's security, route by route", () => {
  it("covers the routes of the document", () => {
    expect(operations.length).toBeGreaterThan(100);
    // Both kinds of route exist: some take API keys, some only a user's token.
    expect(operations.some((op) => declares(op, "api_key"))).toBe(true);
    expect(operations.some((op) => op.security !== undefined && !declares(op, "api_key"))).toBe(true);
  });

  for (const kind of ["api_key", "user"] as const) {
    it(`lets through ${kind === "user" ? "a user's token" : "an API key"} exactly where the document declares it`, async () => {
      const wrong: string[] = [];
      for (const op of operations) {
        if (op.security?.length === 0) continue; // public: no credential needed
        const answer = await call(op, kind === "user" ? { token } : { apiKey });
        const message = (answer.body as { error?: { message?: string } } | undefined)?.error?.message ?? "";
        // An owner's token and a key with every scope, in their own organization: a declared
        // credential meets no 401 or 403 at all (ids that name nothing answer 404 or 400).
        const refused = answer.status === 401 || answer.status === 403;
        if (declares(op, kind) && refused) {
          wrong.push(`${op.method} ${op.path}: ${answer.status} ${message} (declared: ${declares(op, kind)})`);
        }
        if (!declares(op, kind)) {
          const code = (answer.body as { error?: { code?: string } } | undefined)?.error?.code;
          if (answer.status !== 403 || code !== "permission_denied" || !WRONG_CREDENTIAL.test(message)) {
            wrong.push(`${op.method} ${op.path}: ${answer.status} ${code} ${message} (declared: false)`);
          }
        }
      }
      expect(wrong).toEqual([]);
    });
  }
});
