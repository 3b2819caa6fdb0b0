import type { CaseToImport } from "@kiln/contracts/bundle";
import { describe, expect, it } from "vitest";
import { createTestEvaluation, ORG_A, principals } from "../test/test-evaluation.js";

const { userA } = principals;
const SKILL = "skl_both";

const bundled = (id: string, city: string): CaseToImport => ({
  skillId: SKILL,
  skillCreated: false,
  field: "skills[0].evaluationCases[0]",
  case: { id, name: city, input: { city }, assertions: [], createdAt: "2026-01-01T00:00:00.000Z" },
});

describe("imported evaluation cases", () => {
  it("are skipped when imported again, and undone by their import id", async () => {
    const t = await createTestEvaluation();
    const first = await t.cases.importCases(userA, {
      organizationId: ORG_A,
      importId: "imp_1",
      dryRun: false,
      cases: [bundled("evc_src1", "Oslo"), bundled("evc_src2", "Rome")],
    });
    expect(first.map((i) => i.outcome)).toEqual(["created", "created"]);
    const again = await t.cases.importCases(userA, {
      organizationId: ORG_A,
      importId: "imp_2",
      dryRun: false,
      cases: [bundled("evc_src1", "Oslo"), bundled("evc_src3", "Lima")],
    });
    expect(again.map((i) => i.outcome)).toEqual(["skipped", "created"]);
    expect(await t.cases.undoImport(userA, { organizationId: ORG_A, importId: "imp_2" })).toBe(1);
    const left = await t.collections.cases.find({ organizationId: ORG_A });
    expect(left.map((c) => c.name).sort()).toEqual(["Oslo", "Rome"]);
  });

  it("of an import whose gateway died are settled by the catalog's journal once stale", async () => {
    const t = await createTestEvaluation();
    for (const [importId, city] of [
      ["imp_committed", "Oslo"],
      ["imp_undone", "Rome"],
      ["imp_applied", "Lima"],
      ["imp_gone", "Kyiv"],
    ] as const) {
      await t.cases.importCases(userA, {
        organizationId: ORG_A,
        importId,
        dryRun: false,
        cases: [bundled(`evc_${city}`, city)],
      });
    }
    t.catalog.imports.set("imp_committed", "committed");
    t.catalog.imports.set("imp_undone", "undone");
    t.catalog.imports.set("imp_applied", "applied");
    // Not stale yet: nothing is asked or changed.
    expect(await t.cases.sweepImports(60_000)).toBe(0);
    expect(await t.collections.cases.countDocuments({ organizationId: ORG_A })).toBe(4);
    expect(await t.cases.sweepImports(-1)).toBe(3);
    const left = await t.collections.cases.find({ organizationId: ORG_A });
    expect(left.map((c) => [c.name, c.importPending]).sort()).toEqual([
      ["Lima", true],
      ["Oslo", false],
    ]);
    expect(await t.collections.caseImports.countDocuments({ importId: "imp_undone" })).toBe(0);
    // A settled import is not asked again; the unfinished one is, until the catalog settles it.
    t.catalog.imports.set("imp_applied", "committed");
    expect(await t.cases.sweepImports(-1)).toBe(1);
    expect(await t.cases.sweepImports(-1)).toBe(0);
  });
});
