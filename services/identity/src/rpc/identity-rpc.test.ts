import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { createInternalTokens } from "@kiln/kit/auth";
import { createLogger } from "@kiln/kit/logger";
import type { Principal } from "@kiln/kit/principal";
import { createForwardInterceptor } from "@kiln/kit/rpc/auth-interceptor";
import { remoteErrorOf } from "@kiln/kit/rpc/errors";
import type { ServiceModule } from "@kiln/kit/rpc/server";
import { createInProcessTransport } from "@kiln/kit/rpc/transport";
import type { Doc, Store } from "@kiln/kit/store";
import { createMemoryStore } from "@kiln/kit/store/memory";
import { Health, HealthCheckResponse_ServingStatus } from "@kiln/proto/health";
import { IdentityService } from "@kiln/proto/identity";
import { createLocalJWKSet, type JSONWebKeySet, jwtVerify, SignJWT } from "jose";
import { beforeEach, describe, expect, it } from "vitest";
import { createIdentityService } from "../service.js";

const SECRET = "internal-secret-for-identity-rpc-tests";
const PASSWORD = "correct-horse-battery";
const tokens = createInternalTokens(SECRET);
const gateway: Principal = { type: "service", id: "gateway" };

let service: ServiceModule;
beforeEach(async () => {
  service = await createIdentityService({
    logger: createLogger({ name: "test", level: "silent" }),
    store: createMemoryStore(),
    tokens,
    issuer: { issuer: "kiln-test", audience: "kiln-api", ttlSeconds: 600 },
  });
});

/** A client whose calls carry an internal token for `principal`, as the gateway sends them. */
const clientAs = (principal: Principal) =>
  createClient(IdentityService, createInProcessTransport(service, [createForwardInterceptor(tokens, principal)]));

/** A client whose calls carry exactly the given headers (none: no credentials at all). */
function clientWithHeaders(headers: Record<string, string> = {}) {
  const setHeaders: Interceptor = (next) => async (req) => {
    for (const [name, value] of Object.entries(headers)) req.header.set(name, value);
    return next(req);
  };
  return createClient(IdentityService, createInProcessTransport(service, [setHeaders]));
}

/** The Connect error `p` rejects with; fails the test when it resolves. */
async function connectErrorOf(p: Promise<unknown>): Promise<ConnectError> {
  const error = await p.then(
    () => {
      throw new Error("expected the call to fail");
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConnectError);
  return error as ConnectError;
}

/** An internal token made with jose directly: valid in every respect but the ones changed. */
async function internalToken(principal: Principal, options: { expiresInSeconds: number; secret?: string }) {
  const nowSeconds = Math.floor(Date.now() / 1000);
  return new SignJWT({ typ: principal.type })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setIssuer("kiln-internal")
    .setAudience("kiln-services")
    .setSubject(principal.id)
    .setIssuedAt(nowSeconds - 120)
    .setExpirationTime(nowSeconds + options.expiresInSeconds)
    .sign(new TextEncoder().encode(options.secret ?? SECRET));
}

/** A user signed up through the service, onboarded, with a client acting as them. */
async function onboardedUser(email = "ada@example.com") {
  const { user } = await clientAs(gateway).signUp({ email, password: PASSWORD, fullName: "Ada" });
  const principal: Principal = { type: "user", id: user?.id ?? "" };
  const client = clientAs(principal);
  const { organization } = await client.completeOnboarding({ fullName: "Ada", organizationName: "Acme" });
  return { userId: principal.id, organizationId: organization?.id ?? "", client };
}

describe("IdentityService authentication", () => {
  it("refuses a call without credentials", async () => {
    const e = await connectErrorOf(clientWithHeaders().verifySetup({}));
    expect(e.code).toBe(Code.Unauthenticated);
  });

  it("refuses an authorization header that is not a bearer credential", async () => {
    const e = await connectErrorOf(clientWithHeaders({ authorization: `Basic ${btoa("ada:pw")}` }).verifySetup({}));
    expect(e.code).toBe(Code.Unauthenticated);
  });

  it("accepts a hand-made internal token that has not expired", async () => {
    // The control for the two refusals below, which differ from this token in one respect each.
    const token = await internalToken(gateway, { expiresInSeconds: 60 });
    const r = await clientWithHeaders({ authorization: `Bearer ${token}` }).getJwks({});
    expect(r.issuer).toBe("kiln-test");
  });

  it("refuses an internal token signed with another secret", async () => {
    const token = await internalToken(gateway, {
      expiresInSeconds: 60,
      secret: "another-secret-of-more-than-32-chars",
    });
    const e = await connectErrorOf(clientWithHeaders({ authorization: `Bearer ${token}` }).getJwks({}));
    expect(e.code).toBe(Code.Unauthenticated);
    const forger = createInternalTokens("another-secret-of-more-than-32-chars");
    const viaForger = createClient(
      IdentityService,
      createInProcessTransport(service, [createForwardInterceptor(forger, gateway)]),
    );
    expect((await connectErrorOf(viaForger.getJwks({}))).code).toBe(Code.Unauthenticated);
  });

  it("refuses an expired internal token", async () => {
    const token = await internalToken(gateway, { expiresInSeconds: -1 });
    const e = await connectErrorOf(clientWithHeaders({ authorization: `Bearer ${token}` }).getJwks({}));
    expect(e.code).toBe(Code.Unauthenticated);
  });

  it.each([
    ["authorization", (key: string) => ({ authorization: `Bearer ${key}` })],
    ["x-api-key", (key: string) => ({ "x-api-key": key })],
  ])("authenticates a raw API key in %s as its api_key principal", async (_, headers) => {
    const { organizationId, client } = await onboardedUser();
    const { apiKey, key } = await client.createApiKey({ organizationId, name: "ci", scopes: ["runs:write"] });
    const r = await clientWithHeaders(headers(key)).verifySetup({});
    expect(r.principal).toMatchObject({ type: "api_key", id: apiKey?.id, organizationId, scopes: ["runs:write"] });
    expect(r.ok).toBe(true);
    expect(r.organization?.id).toBe(organizationId);
  });

  it("refuses a forged or revoked raw API key", async () => {
    const { organizationId, client } = await onboardedUser();
    const { apiKey, key } = await client.createApiKey({ organizationId, name: "ci", scopes: ["runs:write"] });
    const forged = `${key.slice(0, -1)}${key.endsWith("a") ? "b" : "a"}`;
    expect((await connectErrorOf(clientWithHeaders({ "x-api-key": forged }).verifySetup({}))).code).toBe(
      Code.Unauthenticated,
    );
    await client.revokeApiKey({ id: apiKey?.id ?? "" });
    expect((await connectErrorOf(clientWithHeaders({ "x-api-key": key }).verifySetup({}))).code).toBe(
      Code.Unauthenticated,
    );
  });

  it("answers grpc.health.v1 Check without credentials", async () => {
    const health = createClient(Health, createInProcessTransport(service, []));
    expect((await health.check({ service: "" })).status).toBe(HealthCheckResponse_ServingStatus.SERVING);
    expect((await health.check({ service: "readiness" })).status).toBe(HealthCheckResponse_ServingStatus.SERVING);
    service.startDraining();
    expect((await health.check({ service: "readiness" })).status).toBe(HealthCheckResponse_ServingStatus.NOT_SERVING);
  });
});

describe("IdentityService failures", () => {
  /** A memory store whose api_keys collection cannot be read, as when the database is down. */
  function storeWithBrokenKeys(): Store {
    const store = createMemoryStore();
    return {
      collection: <T extends Doc>(name: string) => {
        const collection = store.collection<T>(name);
        if (name !== "api_keys") return collection;
        return {
          ...collection,
          findOne: async () => {
            throw new Error("connection reset by peer");
          },
        };
      },
      ensureIndexes: (name, indexes) => store.ensureIndexes(name, indexes),
      ping: () => store.ping(),
      close: () => store.close(),
    };
  }

  it("answers internal, not unauthenticated, when an API key cannot be looked up", async () => {
    service = await createIdentityService({
      logger: createLogger({ name: "test", level: "silent" }),
      store: storeWithBrokenKeys(),
      tokens,
      issuer: { issuer: "kiln-test", audience: "kiln-api", ttlSeconds: 600 },
    });
    const key = `sk_${"0".repeat(32)}_${"a".repeat(43)}`;
    const e = await connectErrorOf(clientWithHeaders({ "x-api-key": key }).verifySetup({}));
    expect(e.code).toBe(Code.Internal);
    // The cause stays in the log; the caller learns nothing of it.
    expect(e.rawMessage).toBe("internal error");
    expect(remoteErrorOf(e).kind).toBe("internal");
  });
});

describe("IdentityService service-only calls", () => {
  const user: Principal = { type: "user", id: "usr_0190a1b2c3d4e5f60718293a4b5c6d7e" };
  const apiKey: Principal = {
    type: "api_key",
    id: "key_0190a1b2c3d4e5f60718293a4b5c6d7e",
    organizationId: "org_x",
    scopes: [],
  };

  it.each([
    [
      "signUp",
      (c: ReturnType<typeof clientAs>) => c.signUp({ email: "eve@example.com", password: PASSWORD, fullName: "" }),
    ],
    ["issueToken", (c: ReturnType<typeof clientAs>) => c.issueToken({ email: "eve@example.com", password: PASSWORD })],
    ["verifyApiKey", (c: ReturnType<typeof clientAs>) => c.verifyApiKey({ key: "sk_x" })],
    ["getJwks", (c: ReturnType<typeof clientAs>) => c.getJwks({})],
  ])("refuses %s to users and API keys", async (_, call) => {
    expect((await connectErrorOf(call(clientAs(user)))).code).toBe(Code.PermissionDenied);
    expect((await connectErrorOf(call(clientAs(apiKey)))).code).toBe(Code.PermissionDenied);
  });

  it("serves sign-up, tokens and the JWKS to a service, and the tokens verify against the JWKS", async () => {
    const gw = clientAs(gateway);
    const signed = await gw.signUp({ email: " Ada@Example.com", password: PASSWORD, fullName: "Ada" });
    expect(signed.user?.email).toBe("ada@example.com");
    const issued = await gw.issueToken({ email: "ada@example.com", password: PASSWORD });
    const { jwks: set, issuer, audience } = await gw.getJwks({});
    const jwks = createLocalJWKSet(JSON.parse(set?.json ?? "") as JSONWebKeySet);
    for (const token of [signed.accessToken, issued.accessToken]) {
      const { payload } = await jwtVerify(token, jwks, { issuer, audience });
      expect(payload.sub).toBe(signed.user?.id);
    }
    expect(issued.expiresAt).toBeDefined();
    expect(timestampDate(issued.expiresAt!).getTime()).toBeGreaterThan(Date.now());
  });

  it("verifies an API key for a service", async () => {
    const { organizationId, client } = await onboardedUser();
    const { apiKey, key } = await client.createApiKey({ organizationId, name: "ci", scopes: ["prompts:read"] });
    const { principal } = await clientAs(gateway).verifyApiKey({ key });
    expect(principal).toMatchObject({ type: "api_key", id: apiKey?.id, organizationId, scopes: ["prompts:read"] });
  });
});

describe("IdentityService user calls", () => {
  it("completes onboarding for a signed-in user, once", async () => {
    const { user } = await clientAs(gateway).signUp({ email: "ada@example.com", password: PASSWORD, fullName: "" });
    const client = clientAs({ type: "user", id: user?.id ?? "" });
    const first = await client.completeOnboarding({ fullName: "Ada Lovelace", organizationName: "Analytical" });
    expect(first.created).toBe(true);
    expect(first.user?.fullName).toBe("Ada Lovelace");
    expect(first.organization).toMatchObject({ name: "Analytical", plan: "free" });
    expect(first.organization?.entitlements).toMatchObject({ aiEnabled: true, monthlyRunLimit: 1000n });
    expect(first.membership).toMatchObject({ organizationId: first.organization?.id, userId: user?.id, role: "owner" });
    expect(first.membership?.permissions).toContain("ai_platform");
    const again = await client.completeOnboarding({ fullName: "Ada Lovelace", organizationName: "Analytical" });
    expect(again.created).toBe(false);
    expect(again.organization?.id).toBe(first.organization?.id);
  });

  it("gives a new organization the Free plan with the operator's monthly run limit (FREE_PLAN_MONTHLY_RUN_LIMIT)", async () => {
    service = await createIdentityService({
      logger: createLogger({ name: "test", level: "silent" }),
      store: createMemoryStore(),
      tokens,
      issuer: { issuer: "kiln-test", audience: "kiln-api", ttlSeconds: 600 },
      freePlanMonthlyRunLimit: 0,
    });
    const { user } = await clientAs(gateway).signUp({ email: "ada@example.com", password: PASSWORD, fullName: "" });
    const client = clientAs({ type: "user", id: user?.id ?? "" });
    const { organization } = await client.completeOnboarding({ fullName: "Ada", organizationName: "Unlimited" });
    expect(organization).toMatchObject({ plan: "free", entitlements: { aiEnabled: true, monthlyRunLimit: 0n } });
  });

  it("refuses user-only calls to a service", async () => {
    const e = await connectErrorOf(clientAs(gateway).completeOnboarding({ fullName: "Ada", organizationName: "Acme" }));
    expect(e.code).toBe(Code.PermissionDenied);
  });

  it("creates, lists and revokes API keys", async () => {
    const { organizationId, client } = await onboardedUser();
    const a = await client.createApiKey({ organizationId, name: "a", scopes: ["prompts:read"] });
    const b = await client.createApiKey({ organizationId, name: "b", scopes: ["prompts:write"] });
    expect(a.key).toMatch(/^sk_[0-9a-f]{32}_[0-9A-Za-z]+$/);
    expect(a.apiKey?.revokedAt).toBeUndefined();
    const first = await client.listApiKeys({ organizationId, limit: 1 });
    expect(first.apiKeys.map((k) => k.id)).toEqual([b.apiKey?.id]);
    const second = await client.listApiKeys({ organizationId, limit: 1, cursor: first.nextCursor });
    expect(second.apiKeys.map((k) => k.id)).toEqual([a.apiKey?.id]);
    expect(second.nextCursor).toBe("");
    const { apiKey } = await client.revokeApiKey({ id: a.apiKey?.id ?? "" });
    expect(apiKey?.revokedAt).toBeDefined();
  });

  it("authorizes the calling user in their organization and not in another", async () => {
    const a = await onboardedUser("a@example.com");
    const b = await onboardedUser("b@example.com");
    const r = await a.client.authorize({ organizationId: a.organizationId, requireAi: true });
    expect(r).toMatchObject({ role: "owner", organization: { id: a.organizationId } });
    const e = await connectErrorOf(a.client.authorize({ organizationId: b.organizationId, requireAi: true }));
    expect(e.code).toBe(Code.NotFound);
    expect(remoteErrorOf(e).kind).toBe("not_found");
  });
});

describe("IdentityService errors", () => {
  it("brings the field issues of invalid_argument to the client", async () => {
    const e = await connectErrorOf(
      clientAs(gateway).signUp({ email: "not-an-address", password: "short", fullName: "" }),
    );
    expect(e.code).toBe(Code.InvalidArgument);
    expect(remoteErrorOf(e)).toEqual({
      kind: "invalid_argument",
      message: "invalid request",
      details: [
        { field: "email", issue: "must be an e-mail address" },
        { field: "password", issue: "must be at least 8 characters" },
      ],
    });
  });

  it("maps already_exists and unauthenticated to their codes and kinds", async () => {
    const gw = clientAs(gateway);
    await gw.signUp({ email: "ada@example.com", password: PASSWORD, fullName: "" });
    const taken = await connectErrorOf(gw.signUp({ email: "ada@example.com", password: PASSWORD, fullName: "" }));
    expect(taken.code).toBe(Code.AlreadyExists);
    expect(remoteErrorOf(taken)).toMatchObject({
      kind: "already_exists",
      details: [{ field: "email", issue: "is taken" }],
    });
    const wrong = await connectErrorOf(gw.issueToken({ email: "ada@example.com", password: "wrong-password" }));
    expect(wrong.code).toBe(Code.Unauthenticated);
    expect(remoteErrorOf(wrong).kind).toBe("unauthenticated");
  });

  it("brings the field issues of every bad field of a request", async () => {
    const { organizationId, client } = await onboardedUser();
    const e = await connectErrorOf(client.createApiKey({ organizationId, name: "", scopes: ["nope"] }));
    expect(remoteErrorOf(e).details).toEqual([
      { field: "name", issue: "is required" },
      { field: "scopes[0]", issue: 'unknown scope "nope"' },
    ]);
  });

  it("refuses key management to an API key with permission_denied", async () => {
    const { organizationId } = await onboardedUser();
    const apiKeyClient = clientAs({
      type: "api_key",
      id: "key_0190a1b2c3d4e5f60718293a4b5c6d7e",
      organizationId,
      scopes: [],
    });
    const denied = await connectErrorOf(
      apiKeyClient.createApiKey({ organizationId, name: "x", scopes: ["runs:read"] }),
    );
    expect(denied.code).toBe(Code.PermissionDenied);
    expect(remoteErrorOf(denied).kind).toBe("permission_denied");
  });
});

describe("IdentityService members and invitations", () => {
  it("changes a role, invites, lists without tokens, accepts, removes; the last owner is failed_precondition", async () => {
    const { userId, organizationId, client } = await onboardedUser();
    const gw = clientAs(gateway);
    const created = await client.createInvitation({ organizationId, email: "grace@example.com", role: "admin" });
    expect(created.invitation).toMatchObject({ email: "grace@example.com", role: "admin", status: "pending" });
    expect(created.token).toMatch(/^inv_[0-9a-f]{32}_[0-9A-Za-z]{43}$/);
    const listed = await client.listInvitations({ organizationId, limit: 0, cursor: "" });
    expect(listed.invitations.map((i) => i.id)).toEqual([created.invitation?.id]);
    const secret = created.token.split("_")[2] ?? "";
    expect(listed.invitations.flatMap((i) => Object.values(i).map(String))).not.toContain(created.token);
    expect(listed.invitations.some((i) => Object.values(i).some((v) => String(v).includes(secret)))).toBe(false);

    const signedUp = await gw.signUp({
      email: "grace@example.com",
      password: PASSWORD,
      fullName: "Grace",
      invitationToken: created.token,
    });
    expect(signedUp.membership).toMatchObject({ organizationId, role: "admin" });
    const graceId = signedUp.user?.id ?? "";
    const demoted = await client.changeMemberRole({ organizationId, userId: graceId, role: "member" });
    expect(demoted.member?.membership).toMatchObject({ role: "member", permissions: ["ai_platform"] });

    const last = await connectErrorOf(client.removeMember({ organizationId, userId }));
    expect(last.code).toBe(Code.FailedPrecondition);
    expect(remoteErrorOf(last).message).toContain("at least one owner");
    const removed = await client.removeMember({ organizationId, userId: graceId });
    expect(removed.member?.user?.id).toBe(graceId);
    const gone = await connectErrorOf(clientAs({ type: "user", id: graceId }).getOrganization({ organizationId }));
    expect(gone.code).toBe(Code.NotFound);
  });

  it("refuses member management and acceptance to API keys and services", async () => {
    const { organizationId } = await onboardedUser();
    const key = clientAs({ type: "api_key", id: "key_0190a1b2c3d4e5f60718293a4b5c6d7e", organizationId, scopes: [] });
    for (const call of [
      () => key.createInvitation({ organizationId, email: "x@example.com", role: "member" }),
      () => key.acceptInvitation({ token: "inv_x" }),
      () => clientAs(gateway).changeMemberRole({ organizationId, userId: "usr_x", role: "admin" }),
    ]) {
      expect((await connectErrorOf(call())).code).toBe(Code.PermissionDenied);
    }
  });
});
