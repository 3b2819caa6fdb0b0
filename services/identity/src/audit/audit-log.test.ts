import { createMemoryStore } from "@kiln/kit/store/memory";
import { describe, expect, it } from "vitest";
import { identityCollections } from "../store/identity-store.js";
import { type AuditInput, createAuditLog } from "./audit-log.js";
import { auditEntries, auditKey, ensureAuditIndexes } from "./audit-store.js";

const PLATFORM = { type: "service" as const, id: "gateway" };
const ORG = "org_a";

function setup(now = () => new Date()) {
  const store = createMemoryStore();
  const entries = auditEntries(store);
  const c = identityCollections(store);
  return { store, entries, c, audit: createAuditLog(entries, c, now) };
}

const input = (n: number, over: Partial<AuditInput> = {}): AuditInput => ({
  id: `aud_${String(n).padStart(4, "0")}`,
  organizationId: ORG,
  occurredAt: new Date(),
  actorType: "user",
  actorId: "usr_1",
  action: "prompt.created",
  targetType: "prompt",
  targetId: `prm_${n}`,
  requestId: `req_${n}`,
  sourceAddress: "127.0.0.1",
  changedFields: ["name"],
  outcome: "success",
  ...over,
});

describe("the audit log", () => {
  it("numbers concurrent records without a gap or a fork, and the chain verifies", async () => {
    const { store, audit } = setup();
    await ensureAuditIndexes(store);
    await Promise.all(Array.from({ length: 30 }, (_, i) => audit.record(PLATFORM, [input(i)])));
    const v = await audit.verify({ type: "service", id: "x", organizationId: ORG }, ORG);
    expect(v).toMatchObject({ valid: true, entries: 30, firstSequence: 1, lastSequence: 30 });
  });

  it("stores a repeated entry once", async () => {
    const { store, audit, entries } = setup();
    await ensureAuditIndexes(store);
    await audit.record(PLATFORM, [input(1)]);
    await audit.record(PLATFORM, [input(1)]);
    expect(await entries.countDocuments({ organizationId: ORG })).toBe(1);
  });

  it("is recorded by the platform principal only", async () => {
    const { audit } = setup();
    await expect(audit.record({ type: "user", id: "usr_1" }, [input(1)])).rejects.toThrow(/gateway/);
    await expect(audit.record({ type: "service", id: "x", organizationId: ORG }, [input(1)])).rejects.toThrow();
  });

  it("finds a broken link between two entries", async () => {
    const { store, audit, entries } = setup();
    await ensureAuditIndexes(store);
    for (let i = 1; i <= 3; i++) await audit.record(PLATFORM, [input(i)]);
    await entries.updateOne({ _id: auditKey(ORG, 2) }, { $set: { previousHash: "f".repeat(64) } });
    const v = await audit.verify({ type: "service", id: "x", organizationId: ORG }, ORG);
    expect(v).toMatchObject({ valid: false, problem: "link_mismatch", brokenAtSequence: 2 });
  });

  it("sweeps entries past the organization's retention but keeps the newest, and the rest still verifies", async () => {
    let at = new Date("2025-01-01T00:00:00Z");
    const { store, audit, entries, c } = setup(() => at);
    await ensureAuditIndexes(store);
    const base = { plan: "free", entitlements: { aiEnabled: true, monthlyRunLimit: 1 }, createdAt: at, updatedAt: at };
    await c.organizations.insertOne({
      _id: ORG,
      name: "A",
      ...base,
      settings: { protectedLabels: [], auditRetentionDays: 30 },
    });
    await c.organizations.insertOne({ _id: "org_b", name: "B", ...base });
    const old = new Date("2025-01-01T00:00:00Z");
    for (let i = 1; i <= 3; i++) await audit.record(PLATFORM, [input(i, { occurredAt: old })]);
    await audit.record(PLATFORM, [input(9, { organizationId: "org_b", occurredAt: old })]);
    await audit.record(PLATFORM, [input(10, { organizationId: "org_b", occurredAt: old })]);
    at = new Date("2025-03-01T00:00:00Z");
    await audit.record(PLATFORM, [input(4, { occurredAt: at })]);
    // org_a keeps 30 days: entries 1–3 go; org_b keeps the default year: nothing goes.
    expect(await audit.sweep()).toBe(3);
    expect((await entries.find({ organizationId: ORG })).map((e) => e.sequence)).toEqual([4]);
    expect(await entries.countDocuments({ organizationId: "org_b" })).toBe(2);
    const v = await audit.verify({ type: "service", id: "x", organizationId: ORG }, ORG);
    expect(v).toMatchObject({ valid: true, entries: 1, firstSequence: 4 });
  });
});
