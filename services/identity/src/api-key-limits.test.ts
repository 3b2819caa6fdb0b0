/**
 * An API key's token-per-minute limit (docs/usage.md "Token-per-minute limits"): set at creation,
 * changed and removed afterwards by the organization's owners and admins, refused with a detail
 * naming the field when it is not an integer in 1..1e9, and carried by the key's principal.
 */
import { DomainError, type ErrorKind } from "@kiln/kit/errors";
import { newId } from "@kiln/kit/ids";
import { createMemoryStore } from "@kiln/kit/store/memory";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createTokenIssuer, type TokenIssuer } from "./domain/token-issuer.js";
import { createIdentity, type Identity } from "./identity.js";
import { ensureIdentityIndexes, type IdentityCollections, identityCollections } from "./store/identity-store.js";

const T0 = new Date("2026-12-03T09:00:00.000Z");
const ISSUE = "must be an integer from 1 to 1000000000";

let issuer: TokenIssuer;
beforeAll(async () => {
  issuer = await createTokenIssuer({ issuer: "kiln-test", audience: "kiln-api", ttlSeconds: 600 });
});

let c: IdentityCollections;
let identity: Identity;
beforeEach(async () => {
  const store = createMemoryStore();
  await ensureIdentityIndexes(store);
  c = identityCollections(store);
  identity = createIdentity({ collections: c, issuer, now: () => T0 });
});

async function owner(name = "Acme") {
  const id = newId("usr");
  await c.users.insertOne({ _id: id, email: `${id}@example.com`, fullName: "O", createdAt: T0, updatedAt: T0 });
  const { organization } = await identity.completeOnboarding(id, { fullName: "Owner", organizationName: name });
  return { userId: id, organizationId: organization._id };
}

async function kindOf(p: Promise<unknown>, kind: ErrorKind) {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(DomainError);
  expect((e as DomainError).kind).toBe(kind);
  return e as DomainError;
}

describe("an API key's token-per-minute limit", () => {
  it("is stored when the key is created, and its principal carries it", async () => {
    const { userId, organizationId } = await owner();
    const { apiKey, key } = await identity.createApiKey(userId, {
      organizationId,
      name: "ci",
      scopes: ["runs:write"],
      tokensPerMinute: 40_000,
    });
    expect(apiKey.tokensPerMinute).toBe(40_000);
    expect(await identity.verifyApiKey(key)).toMatchObject({
      type: "api_key",
      id: apiKey._id,
      tokensPerMinute: 40_000,
    });
    // A key without one has no limit, and its principal none.
    const plain = await identity.createApiKey(userId, { organizationId, name: "x", scopes: ["runs:write"] });
    expect(plain.apiKey).not.toHaveProperty("tokensPerMinute");
    expect(await identity.verifyApiKey(plain.key)).not.toHaveProperty("tokensPerMinute");
  });

  it("refuses 0, a negative, a fraction and more than a billion, naming the field, and creates nothing", async () => {
    const { userId, organizationId } = await owner();
    for (const tokensPerMinute of [0, -5, 1.5, 1_000_000_001]) {
      const e = await kindOf(
        identity.createApiKey(userId, { organizationId, name: "ci", scopes: ["runs:write"], tokensPerMinute }),
        "invalid_argument",
      );
      expect(e.details).toEqual([{ field: "tokensPerMinute", issue: ISSUE }]);
    }
    expect(await c.apiKeys.countDocuments({})).toBe(0);
    const { apiKey } = await identity.createApiKey(userId, {
      organizationId,
      name: "max",
      scopes: ["runs:write"],
      tokensPerMinute: 1_000_000_000,
    });
    expect(apiKey.tokensPerMinute).toBe(1_000_000_000);
  });

  it("is changed and removed by updateApiKey; bad values change nothing", async () => {
    const { userId, organizationId } = await owner();
    const { apiKey, key } = await identity.createApiKey(userId, { organizationId, name: "ci", scopes: ["runs:write"] });
    expect((await identity.updateApiKey(userId, apiKey._id, { tokensPerMinute: 500 })).tokensPerMinute).toBe(500);
    expect(await identity.verifyApiKey(key)).toMatchObject({ tokensPerMinute: 500 });
    await kindOf(identity.updateApiKey(userId, apiKey._id, { tokensPerMinute: 0 }), "invalid_argument");
    expect((await c.apiKeys.findOne({ _id: apiKey._id }))?.tokensPerMinute).toBe(500);
    // Nothing asked, nothing changed.
    expect((await identity.updateApiKey(userId, apiKey._id, {})).tokensPerMinute).toBe(500);
    const removed = await identity.updateApiKey(userId, apiKey._id, { tokensPerMinute: null });
    expect(removed).not.toHaveProperty("tokensPerMinute");
    expect(await identity.verifyApiKey(key)).not.toHaveProperty("tokensPerMinute");
  });

  it("is not found for another organization's owner, nor for a key that is not there", async () => {
    const { userId, organizationId } = await owner("A");
    const other = await owner("B");
    const { apiKey } = await identity.createApiKey(userId, { organizationId, name: "ci", scopes: ["runs:write"] });
    await kindOf(identity.updateApiKey(other.userId, apiKey._id, { tokensPerMinute: 1 }), "not_found");
    await kindOf(identity.updateApiKey(userId, newId("key"), { tokensPerMinute: 1 }), "not_found");
    expect((await c.apiKeys.findOne({ _id: apiKey._id }))?.tokensPerMinute).toBeUndefined();
  });
});
