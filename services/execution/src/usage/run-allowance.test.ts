import { DomainError } from "@kiln/kit/errors";
import { describe, expect, it } from "vitest";
import { createRunAllowance } from "./run-allowance.js";

const ORG = "org_00000000000000000000000000000001";
const tick = () => new Promise((r) => setImmediate(r));

/** An allowance of `limit` runs over a ledger count the test sets, read on every admission. */
function allowanceOf(limit: number) {
  const ledger = { runs: 0, reads: 0 };
  const allowance = createRunAllowance({
    monthlyRunLimitOf: async () => limit,
    monthRunsOf: async () => {
      ledger.reads++;
      return ledger.runs;
    },
    refreshMs: 0,
    now: () => new Date("2026-12-02T20:00:00Z"),
  });
  const refused = (runId: string) =>
    allowance.admit(ORG, runId).then(
      () => false,
      (e: unknown) => e instanceof DomainError && e.kind === "resource_exhausted",
    );
  return { allowance, ledger, refused };
}

describe("the plan's run allowance", () => {
  it("refuses the run past the limit within one process, before the ledger counted any", async () => {
    const { allowance, refused } = allowanceOf(2);
    expect(await refused("r1")).toBe(false);
    expect(await refused("r2")).toBe(false);
    allowance.finished(ORG, "r1", true);
    expect(await refused("r3")).toBe(true);
    // A run that was not stored never counts.
    allowance.finished(ORG, "r2", false);
    expect(await refused("r4")).toBe(false);
  });

  it("counts a run once when a read that began before its count was told already had it", async () => {
    const { allowance, ledger, refused } = allowanceOf(3);
    expect(await refused("r1")).toBe(false);
    allowance.finished(ORG, "r1", true);
    // The flush is applied and read (each admission reads in the background) before r1 is told counted.
    ledger.runs = 1;
    expect(await refused("r2")).toBe(false);
    await tick();
    allowance.finished(ORG, "r2", true);
    allowance.counted(ORG, ["r1"]);
    // Until a read that began after the count, r1 is both the ledger's and here: 3 of 3.
    expect(await refused("probe")).toBe(true);
    await tick();
    // Read again after the count: r1 once (the ledger's) and r2 here, 2 of 3: one more is admitted.
    expect(await refused("r3")).toBe(false);
    allowance.finished(ORG, "r3", true);
    expect(await refused("r4")).toBe(true);
    expect(ledger.reads).toBe(5);
  });
});
