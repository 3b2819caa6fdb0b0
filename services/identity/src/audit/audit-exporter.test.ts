import { fromJson, type JsonValue } from "@bufbuild/protobuf";
import { createLogger } from "@kiln/kit/logger";
import { createMemoryStore } from "@kiln/kit/store/memory";
import { ExportLogsServiceRequestSchema } from "@kiln/proto/otlp/logs-service";
import { describe, expect, it } from "vitest";
import { identityCollections } from "../store/identity-store.js";
import { type AuditDestination, createAuditExporter, type SendOutcome } from "./audit-exporter.js";
import { type AuditInput, createAuditLog } from "./audit-log.js";
import { type AuditEntryDoc, auditEntries } from "./audit-store.js";
import { createExportCursors, exportCursors } from "./export-cursors.js";
import { logsRequestOf } from "./otlp-destination.js";

const PLATFORM = { type: "service" as const, id: "gateway" };
const logger = createLogger({ name: "test", level: "silent" });

const input = (n: number, organizationId: string, over: Partial<AuditInput> = {}): AuditInput => ({
  id: `aud_${organizationId}_${n}`,
  organizationId,
  occurredAt: new Date(1_700_000_000_000 + n),
  actorType: "user",
  actorId: "usr_1",
  action: "prompt.created",
  targetType: "prompt",
  targetId: `prm_${n}`,
  requestId: `req_${n}`,
  sourceAddress: "127.0.0.1",
  changedFields: ["name", "template"],
  outcome: "success",
  ...over,
});

/** A receiver that keeps what it acknowledged, and answers what `answer` says. */
function receiver(organizations: string[], answer: () => SendOutcome = () => ({ ok: true })) {
  const got: { organizationId: string; sequences: number[] }[] = [];
  const destination: AuditDestination = {
    name: "test",
    organizations: async () => organizations,
    async send(organizationId, entries) {
      const outcome = answer();
      if (outcome.ok) got.push({ organizationId, sequences: entries.map((e) => e.sequence) });
      return outcome;
    },
  };
  const sequencesOf = (org: string) => got.filter((g) => g.organizationId === org).flatMap((g) => g.sequences);
  return { destination, got, sequencesOf };
}

async function setup(orgs: Record<string, number>) {
  const store = createMemoryStore();
  const audit = createAuditLog(auditEntries(store), identityCollections(store));
  for (const [org, n] of Object.entries(orgs))
    for (let i = 1; i <= n; i++) await audit.record(PLATFORM, [input(i, org)]);
  return { store, audit };
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

describe("the audit exporter", () => {
  it("sends every organization's entries in order, a page at a time, and each once across two replicas", async () => {
    const { store } = await setup({ org_a: 23, org_b: 7 });
    const r = receiver(["org_a", "org_b"]);
    const options = { entries: auditEntries(store), cursors: exportCursors(store), logger, pageSize: 5 };
    const one = createAuditExporter({
      ...options,
      destinations: [r.destination],
      holder: "one",
      intervalMs: 3_600_000,
    });
    const two = createAuditExporter({
      ...options,
      destinations: [r.destination],
      holder: "two",
      intervalMs: 3_600_000,
    });
    await Promise.all([one.runOnce(), two.runOnce(), one.runOnce(), two.runOnce()]);
    expect(r.sequencesOf("org_a")).toEqual(range(23));
    expect(r.sequencesOf("org_b")).toEqual(range(7));
    expect(Math.max(...r.got.map((g) => g.sequences.length))).toBe(5);
    const cursor = await exportCursors(store).findOne({ _id: "test:org_a" });
    expect(cursor).toMatchObject({ sequence: 23, failures: 0, leaseHolder: "" });
    await Promise.all([one.stop(), two.stop()]);
  });

  it("keeps the cursor on a refused page and sends it again after the backoff, nothing lost", async () => {
    const { store, audit } = await setup({ org_a: 4 });
    let now = new Date(1_800_000_000_000);
    let refusals = 3;
    const r = receiver(["org_a"], () =>
      refusals-- > 0 ? { ok: false, status: 503, error: "HTTP 503" } : { ok: true },
    );
    const exporter = createAuditExporter({
      entries: auditEntries(store),
      cursors: exportCursors(store),
      destinations: [r.destination],
      logger,
      backoffMs: 1_000,
      now: () => now,
      intervalMs: 3_600_000,
    });
    await exporter.runOnce();
    const cursors = exportCursors(store);
    expect(await cursors.findOne({ _id: "test:org_a" })).toMatchObject({ sequence: 0, failures: 1 });
    // Within the backoff nothing is tried.
    await exporter.runOnce();
    expect(refusals).toBe(2);
    now = new Date(now.getTime() + 1_000);
    await exporter.runOnce();
    expect(await cursors.findOne({ _id: "test:org_a" })).toMatchObject({ sequence: 0, failures: 2 });
    // The second wait is twice the first.
    now = new Date(now.getTime() + 1_999);
    await exporter.runOnce();
    expect(refusals).toBe(1);
    now = new Date(now.getTime() + 1);
    await exporter.runOnce();
    now = new Date(now.getTime() + 4_000);
    await audit.record(PLATFORM, [input(5, "org_a")]);
    await exporter.runOnce();
    expect(r.sequencesOf("org_a")).toEqual(range(5));
    expect(await cursors.findOne({ _id: "test:org_a" })).toMatchObject({ sequence: 5, failures: 0 });
    await exporter.stop();
  });

  it("leases an organization's export to one holder until it is released or runs out", async () => {
    const store = createMemoryStore();
    const t0 = new Date(1_800_000_000_000);
    const a = createExportCursors(exportCursors(store), "a", 30_000);
    const b = createExportCursors(exportCursors(store), "b", 30_000);
    const claimed = await a.claim("otlp", "org_a", t0);
    expect(claimed).toMatchObject({ sequence: 0, leaseHolder: "a" });
    expect(await b.claim("otlp", "org_a", t0)).toBeNull();
    // Another organization's export is free.
    expect(await b.claim("otlp", "org_b", t0)).toMatchObject({ leaseHolder: "b" });
    if (!claimed) throw new Error("not claimed");
    expect(await a.advance(claimed, 7, t0)).toBe(true);
    // A holder whose lease ran out loses it, and cannot move the cursor any more.
    const later = new Date(t0.getTime() + 30_001);
    const taken = await b.claim("otlp", "org_a", later);
    expect(taken).toMatchObject({ sequence: 7, leaseHolder: "b" });
    expect(await a.advance(claimed, 9, later)).toBe(false);
    if (!taken) throw new Error("not taken");
    await b.release(taken);
    expect(await a.claim("otlp", "org_a", later)).toMatchObject({ sequence: 7, leaseHolder: "a" });
  });
});

describe("the OTLP log records", () => {
  it("are a valid OTLP/HTTP JSON export request, one record per entry", async () => {
    const { store } = await setup({});
    const audit = createAuditLog(auditEntries(store), identityCollections(store));
    await audit.record(PLATFORM, [input(1, "org_a")]);
    await audit.record(PLATFORM, [input(2, "org_a", { action: "user.sign_in_failed", outcome: "failure" })]);
    const entries: AuditEntryDoc[] = await auditEntries(store).find({}, { sort: { sequence: 1 } });
    const json = JSON.parse(JSON.stringify(logsRequestOf(entries))) as JsonValue;
    const request = fromJson(ExportLogsServiceRequestSchema, json);
    const resource = request.resourceLogs[0];
    expect(resource?.resource?.attributes).toMatchObject([
      { key: "service.name", value: { value: { case: "stringValue", value: "kiln-identity" } } },
    ]);
    expect(resource?.scopeLogs[0]?.scope?.name).toBe("kiln.audit");
    const records = resource?.scopeLogs[0]?.logRecords ?? [];
    expect(records.map((r) => [r.severityText, r.severityNumber, r.body?.value.value])).toEqual([
      ["INFO", 9, "prompt.created"],
      ["WARN", 13, "user.sign_in_failed"],
    ]);
    expect(records[0]?.timeUnixNano).toBe(1_700_000_000_001n * 1_000_000n);
    const attrs = Object.fromEntries((records[0]?.attributes ?? []).map((a) => [a.key, a.value?.value]));
    expect(attrs["kiln.organization.id"]).toEqual({ case: "stringValue", value: "org_a" });
    expect(attrs["kiln.audit.sequence"]).toEqual({ case: "intValue", value: 1n });
    expect(attrs["kiln.audit.hash"]).toEqual({ case: "stringValue", value: entries[0]?.hash });
    expect(attrs["kiln.audit.changed_fields"]?.case).toBe("arrayValue");
  });
});
