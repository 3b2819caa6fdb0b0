import { DomainError } from "@kiln/kit/errors";
import { describe, expect, it } from "vitest";
import type { RunDoc } from "../store/run-store.js";
import { createBudgetGate } from "./budget-gate.js";
import type { BudgetDoc } from "./budget-store.js";

const ORG = "org_00000000000000000000000000000001";
const KEY = "key_00000000000000000000000000000001";

function budget(fields: Partial<BudgetDoc>): BudgetDoc {
  return {
    _id: "bdg_00000000000000000000000000000001",
    organizationId: ORG,
    name: "cap",
    scope: { type: "organization", id: "" },
    limitUsd: 1,
    period: "day",
    action: "block",
    alertAt: [],
    createdAt: new Date(0),
    updatedAt: new Date(0),
    ...fields,
  };
}

/** A gate over fixed budgets and a ledger the test sets; counts the reads of each. */
function gateOf(budgets: BudgetDoc[], at = new Date("2026-12-02T20:00:00Z"), staleMs?: number) {
  const reads = { budgets: 0, ledger: 0 };
  const ledger = new Map<string, number>();
  const thresholds: [string, number][] = [];
  const gate = createBudgetGate({
    budgetsOf: async () => {
      reads.budgets++;
      return budgets;
    },
    ledgerSpendOf: async (_org, periods, scopes) => {
      reads.ledger++;
      return new Map(periods.map((p) => [p, new Map(scopes.map((s) => [s, ledger.get(`${p}|${s}`) ?? 0]))]));
    },
    onThreshold: (b, _p, t) => thresholds.push([b._id, t]),
    refreshMs: 1_000_000,
    staleMs,
    budgetsTtlMs: 1_000_000,
    now: () => at,
  });
  let n = 0;
  const stored = (costUsd: number): RunDoc =>
    ({
      _id: `run_${String(++n).padStart(32, "0")}`,
      kind: "prompt",
      estimatedCostUsd: costUsd,
      completedAt: at,
    }) as RunDoc;
  return { gate, reads, ledger, thresholds, stored };
}

const refusalOf = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e as DomainError,
  );

describe("the budget gate", () => {
  it("with no budgets reads them once and nothing else", async () => {
    const { gate, reads } = gateOf([]);
    for (let i = 0; i < 100; i++) await gate.admit({ organizationId: ORG });
    expect(reads).toEqual({ budgets: 1, ledger: 0 });
  });

  it("refuses the run after the spend reaches the limit, exactly within one process, naming the budget", async () => {
    const { gate, stored } = gateOf([budget({ limitUsd: 0.3 })]);
    const run = { organizationId: ORG };
    for (let i = 0; i < 3; i++) {
      await gate.admit(run);
      gate.finished(run, stored(0.1));
    }
    const e = await refusalOf(gate.admit(run));
    expect(e).toBeInstanceOf(DomainError);
    expect(e).toMatchObject({ kind: "resource_exhausted", details: [{ field: "budgetId", issue: budget({})._id }] });
    // 20:00 UTC: four hours to the day's end.
    expect(e?.retryAfterSeconds).toBe(4 * 3600);
  });

  it("counts a limit reached when floating-point sums land a hair under it", async () => {
    const { gate, stored } = gateOf([budget({ limitUsd: 1 })]);
    const run = { organizationId: ORG };
    for (let i = 0; i < 10; i++) {
      await gate.admit(run);
      gate.finished(run, stored(0.1));
    }
    expect(await refusalOf(gate.admit(run))).toBeInstanceOf(DomainError);
  });

  it("lets the runs in flight pass the line: their cost is unknown until they finish", async () => {
    const { gate, stored } = gateOf([budget({ limitUsd: 0.15 })]);
    const run = { organizationId: ORG };
    await Promise.all([gate.admit(run), gate.admit(run), gate.admit(run)]);
    for (let i = 0; i < 3; i++) gate.finished(run, stored(0.1));
    expect(await refusalOf(gate.admit(run))).toBeInstanceOf(DomainError);
  });

  it("counts a run once when the ledger counted it, and reads the ledger's spend of other processes", async () => {
    const { gate, stored } = gateOf([budget({ limitUsd: 0.25 })]);
    const run = { organizationId: ORG };
    await gate.admit(run);
    const doc = stored(0.2);
    gate.finished(run, doc);
    gate.counted(ORG, [doc._id]);
    expect(gate.uncounted(ORG, "2026-12-02", "organization")).toBe(0);
    // Counted by the ledger (0.2) and not twice: 0.2 < 0.25 still admits.
    await gate.admit(run);
    const fresh = gateOf([budget({ limitUsd: 0.25 })]);
    fresh.ledger.set("2026-12-02|organization", 0.3);
    expect(await refusalOf(fresh.gate.admit(run))).toBeInstanceOf(DomainError);
  });

  it("a key's budget refuses that key's runs only; alert budgets refuse nothing", async () => {
    const { gate, stored } = gateOf([
      budget({ scope: { type: "api_key", id: KEY }, limitUsd: 0.1 }),
      budget({ _id: "bdg_00000000000000000000000000000002", limitUsd: 0.01, action: "alert" }),
    ]);
    const keyed = { organizationId: ORG, apiKeyId: KEY };
    await gate.admit(keyed);
    gate.finished(keyed, stored(0.1));
    expect(await refusalOf(gate.admit(keyed))).toBeInstanceOf(DomainError);
    await gate.admit({ organizationId: ORG });
    await gate.admit({ organizationId: ORG, apiKeyId: "key_00000000000000000000000000000002" });
  });

  it("announces each threshold once per period, several at once when one run crosses them", async () => {
    const { gate, stored, thresholds } = gateOf([budget({ limitUsd: 1, action: "alert", alertAt: [0.5, 0.8, 1] })]);
    const run = { organizationId: ORG };
    for (const cost of [0.4, 0.45, 0.1, 0.5]) {
      await gate.admit(run);
      gate.finished(run, stored(cost));
    }
    const id = budget({})._id;
    expect(thresholds).toEqual([
      [id, 0.5],
      [id, 0.8],
      [id, 1],
    ]);
  });

  it("announces thresholds that the ledger's spend (other processes', earlier ones') reached, alert budgets too", async () => {
    const { gate, stored, thresholds, ledger } = gateOf([budget({ limitUsd: 1, action: "alert", alertAt: [0.5, 1] })]);
    ledger.set("2026-12-02|organization", 0.9);
    const run = { organizationId: ORG };
    await gate.admit(run);
    gate.finished(run, stored(0.01));
    await new Promise((r) => setImmediate(r));
    expect(thresholds.map(([, t]) => t)).toEqual([0.5]);
    gate.finished(run, stored(0.1));
    expect(thresholds.map(([, t]) => t)).toEqual([0.5, 1]);
  });

  it("reads the budgets again after a change made here", async () => {
    const { gate, reads } = gateOf([]);
    await gate.admit({ organizationId: ORG });
    gate.invalidate(ORG);
    await gate.admit({ organizationId: ORG });
    expect(reads.budgets).toBe(2);
  });

  it("counts a run once when a read that began before its count was told already had it", async () => {
    // Every admission reads the ledger; with no lock a read may see a flush before it is told.
    const { gate, stored, ledger, reads } = gateOf([budget({ limitUsd: 0.15 })], undefined, 0);
    const run = { organizationId: ORG };
    await gate.admit(run);
    const doc = stored(0.1);
    gate.finished(run, doc);
    // The flush is applied, a read sees it, and only then is the run told counted.
    ledger.set("2026-12-02|organization", 0.1);
    expect(await refusalOf(gate.admit(run))).toBeInstanceOf(DomainError);
    gate.counted(ORG, [doc._id]);
    expect(gate.uncounted(ORG, "2026-12-02", "organization")).toBe(0);
    // The next read began after the count: the run is the ledger's 0.1, once, and 0.1 < 0.15 admits.
    await gate.admit(run);
    await gate.admit(run);
    expect(reads.ledger).toBe(4);
  });

  it("reads the ledger for a scope a new budget brings before it admits", async () => {
    const budgets = [budget({ limitUsd: 1 })];
    const { gate, ledger, reads } = gateOf(budgets);
    await gate.admit({ organizationId: ORG, apiKeyId: KEY });
    expect(reads.ledger).toBe(1);
    // A key budget made here, its key already over it in the ledger.
    ledger.set(`2026-12-02|api_key:${KEY}`, 0.5);
    budgets.push(
      budget({ _id: "bdg_00000000000000000000000000000002", scope: { type: "api_key", id: KEY }, limitUsd: 0.2 }),
    );
    gate.invalidate(ORG);
    expect(await refusalOf(gate.admit({ organizationId: ORG, apiKeyId: KEY }))).toBeInstanceOf(DomainError);
  });
});
