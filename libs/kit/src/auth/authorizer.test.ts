/**
 * The remote IdentityAuth's cache: one identity call per key at a time (the herd when a cached
 * answer expires under load), refusals reach every waiter and are never cached.
 */
import type { Client } from "@connectrpc/connect";
import type { IdentityService } from "@kiln/proto/identity";
import { describe, expect, it } from "vitest";
import { DomainError, unauthenticated } from "../errors.js";
import { createRemoteIdentityAuth } from "./authorizer.js";

function fakeIdentity() {
  const calls = { verify: 0, authorize: 0 };
  let refuse = false;
  let tokensPerMinute: number | undefined;
  let release: () => void = () => undefined;
  let gate = Promise.resolve();
  const identity = {
    async verifyApiKey() {
      calls.verify++;
      // What the key was when identity read it: a change after that is not in this answer.
      const tpm = tokensPerMinute;
      await gate;
      if (refuse) throw unauthenticated("unknown key");
      return {
        principal: {
          type: "api_key",
          id: "key_1",
          organizationId: "org_1",
          scopes: ["runs:write"],
          tokensPerMinute: tpm,
        },
      };
    },
    async authorize() {
      calls.authorize++;
      await gate;
      return { organizationId: "org_1", role: "owner" };
    },
  } as unknown as Client<typeof IdentityService>;
  return {
    identity,
    calls,
    refuse: (on: boolean) => {
      refuse = on;
    },
    limit: (tpm: number | undefined) => {
      tokensPerMinute = tpm;
    },
    hold: () => {
      gate = new Promise((r) => {
        release = r;
      });
    },
    release: () => release(),
  };
}

describe("createRemoteIdentityAuth", () => {
  it("makes one identity call for many concurrent misses of the same key, then answers from the cache", async () => {
    const fake = fakeIdentity();
    const auth = createRemoteIdentityAuth(fake.identity);
    fake.hold();
    const waiting = Array.from({ length: 100 }, () => auth.verifyApiKey("kiln_sk_abc"));
    const deciding = Array.from({ length: 100 }, () =>
      auth.authorize({ type: "user", id: "usr_1" }, { organizationId: "org_1", requireAi: true }),
    );
    fake.release();
    const principals = await Promise.all(waiting);
    await Promise.all(deciding);
    expect(new Set(principals.map((p) => p.id))).toEqual(new Set(["key_1"]));
    expect(fake.calls).toEqual({ verify: 1, authorize: 1 });
    await auth.verifyApiKey("kiln_sk_abc");
    expect(fake.calls.verify).toBe(1);
    // Another key is another call.
    await auth.verifyApiKey("kiln_sk_other");
    expect(fake.calls.verify).toBe(2);
  });

  it("refuses every waiter of a refused key and asks again next time", async () => {
    const fake = fakeIdentity();
    const auth = createRemoteIdentityAuth(fake.identity);
    fake.refuse(true);
    fake.hold();
    const waiting = Array.from({ length: 10 }, () => auth.verifyApiKey("kiln_sk_bad").catch((e: unknown) => e));
    fake.release();
    for (const e of await Promise.all(waiting)) {
      expect(e).toBeInstanceOf(DomainError);
      expect((e as DomainError).kind).toBe("unauthenticated");
    }
    expect(fake.calls.verify).toBe(1);
    fake.refuse(false);
    expect((await auth.verifyApiKey("kiln_sk_bad")).id).toBe("key_1");
    expect(fake.calls.verify).toBe(2);
  });

  it("carries a key's token-per-minute limit, and asks again at once about a key changed here", async () => {
    const fake = fakeIdentity();
    const auth = createRemoteIdentityAuth(fake.identity);
    fake.limit(1_000);
    expect(await auth.verifyApiKey("kiln_sk_abc")).toMatchObject({ tokensPerMinute: 1_000 });
    fake.limit(2_000);
    // Cached: the old limit until the answer expires, or until the key changes through this process.
    expect(await auth.verifyApiKey("kiln_sk_abc")).toMatchObject({ tokensPerMinute: 1_000 });
    auth.forgetApiKey?.("key_1");
    expect(await auth.verifyApiKey("kiln_sk_abc")).toMatchObject({ tokensPerMinute: 2_000 });
    expect(fake.calls.verify).toBe(2);
    // Asked once again, then cached as before.
    await auth.verifyApiKey("kiln_sk_abc");
    expect(fake.calls.verify).toBe(2);
  });

  it("asks again about a key changed while its answer was on the way", async () => {
    const fake = fakeIdentity();
    const auth = createRemoteIdentityAuth(fake.identity);
    fake.limit(1_000);
    fake.hold();
    const asked = auth.verifyApiKey("kiln_sk_abc");
    auth.forgetApiKey?.("key_1");
    fake.limit(2_000);
    fake.release();
    expect(await asked).toMatchObject({ tokensPerMinute: 2_000 });
    expect(fake.calls.verify).toBe(2);
  });
});
