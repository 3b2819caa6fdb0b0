/**
 * The import saga (run-import.ts) on the catalog's own use cases, with an evaluation service that
 * records what it is asked and fails when told to: a real import commits after the cases, a dry run
 * writes nothing, and a failure of the cases or of the commit leaves nothing behind. The same
 * import over the whole platform, in both run modes, is test/bundles.test.ts.
 */
import { create } from "@bufbuild/protobuf";
import type { Bundle } from "@kiln/contracts/bundle";
import { DomainError } from "@kiln/kit/errors";
import { toConnectError } from "@kiln/kit/rpc/errors";
import { ImportEvaluationCasesResponseSchema, UndoEvaluationCaseImportResponseSchema } from "@kiln/proto/evaluation";
import { ListModelsResponseSchema } from "@kiln/proto/execution";
import { beforeEach, describe, expect, it } from "vitest";
import { createTestCatalog, ORG_A, ORG_B, principals, snapshotOf } from "../../test/test-catalog.js";
import { createImportRun, type ImportPeers } from "./run-import.js";

const { userA, userB } = principals;

let catalog: Awaited<ReturnType<typeof createTestCatalog>>;
let bundle: Bundle;
/** What the evaluation service was asked, in order. */
let calls: { rpc: string; importId: string; dryRun?: boolean; cases?: number }[];
/** Set: the evaluation service refuses the cases with it. */
let casesFail: DomainError | undefined;

const peers: ImportPeers = {
  evaluation: {
    async importEvaluationCases(req) {
      const cases = JSON.parse(req.casesJson ?? "[]") as { case: { id: string; name: string } }[];
      calls.push({ rpc: "import", importId: req.importId ?? "", dryRun: req.dryRun, cases: cases.length });
      if (casesFail) throw toConnectError(casesFail);
      return create(ImportEvaluationCasesResponseSchema, {
        items: cases.map((k) => ({
          kind: "evaluation_case",
          sourceId: k.case.id,
          id: `evc_${k.case.id}`,
          name: k.case.name,
          outcome: "created",
        })),
      });
    },
    async undoEvaluationCaseImport(req) {
      calls.push({ rpc: "undo", importId: req.importId ?? "" });
      return create(UndoEvaluationCaseImportResponseSchema, { deleted: 1 });
    },
  },
  execution: {
    async listModels() {
      return create(ListModelsResponseSchema, { models: [{ id: "local/echo", available: true }] });
    },
  },
};

beforeEach(async () => {
  catalog = await createTestCatalog({ staleImportMs: 60_000 });
  calls = [];
  casesFail = undefined;
  const skill = await catalog.skills.createSkill(userA, { organizationId: ORG_A, name: "Forecaster", description: "" });
  bundle = await catalog.bundles.exportBundle(userA, { organizationId: ORG_A });
  const [first] = bundle.skills;
  if (!first || first.id !== skill.skill._id) throw new Error("expected the skill in the export");
  first.evaluationCases = [
    { id: "case_oslo", name: "Oslo", input: { city: "Oslo" }, assertions: [], createdAt: "2026-01-01T00:00:00.000Z" },
  ];
});

const run = (dryRun: boolean) =>
  createImportRun(catalog.bundles, () => peers)(
    { principal: userB },
    { organizationId: ORG_B, dryRun, document: { format: "kiln.bundle/v1", bundle } },
  );

/** ORG_B's catalog: what an import writes (the journals, which record attempts, left out). */
async function orgB() {
  const { imports: _, ...rest } = await snapshotOf(catalog.collections);
  return Object.fromEntries(
    Object.entries(rest).map(([name, docs]) => [
      name,
      docs.filter((d) => (d as { organizationId?: string }).organizationId === ORG_B),
    ]),
  );
}

describe("the import saga", () => {
  it("imports the catalog's part, then the cases, then commits: one report of both", async () => {
    const report = await run(false);
    expect(report.dryRun).toBe(false);
    expect(report.format).toBe("kiln.bundle/v1");
    expect(report.summary).toEqual({ created: 2, updated: 0, skipped: 0, conflicts: 0 });
    expect(report.items.map((i) => [i.kind, i.outcome])).toEqual([
      ["skill", "created"],
      ["evaluation_case", "created"],
    ]);
    const [journal] = await catalog.collections.imports.find({ organizationId: ORG_B });
    expect(journal?.status).toBe("committed");
    expect(calls).toEqual([{ rpc: "import", importId: journal?._id, dryRun: false, cases: 1 }]);
    expect((await catalog.collections.skills.find({ organizationId: ORG_B })).length).toBe(1);
  });

  it("a dry run reports both parts and writes nothing", async () => {
    const before = await orgB();
    const report = await run(true);
    expect(report.dryRun).toBe(true);
    expect(report.summary.created).toBe(2);
    expect(calls).toEqual([{ rpc: "import", importId: "", dryRun: true, cases: 1 }]);
    expect(await catalog.collections.imports.find({ organizationId: ORG_B })).toEqual([]);
    expect(await orgB()).toEqual(before);
  });

  it("when the cases are refused, the catalog's part is undone and the refusal passes on", async () => {
    const before = await orgB();
    casesFail = new DomainError("invalid_argument", "bad case", [
      { field: "skills[0].evaluationCases[0].assertions[0]", issue: "is not an assertion" },
    ]);
    const err = await run(false).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(DomainError);
    expect(err).toMatchObject({
      kind: "invalid_argument",
      message: "bad case",
      details: [{ field: "skills[0].evaluationCases[0].assertions[0]", issue: "is not an assertion" }],
    });
    const [journal] = await catalog.collections.imports.find({ organizationId: ORG_B });
    expect(journal?.status).toBe("undone");
    expect(calls.map((c) => c.rpc)).toEqual(["import"]);
    expect(await orgB()).toEqual(before);
  });

  it("when the commit fails, the cases and the catalog's part are undone", async () => {
    const before = await orgB();
    const imports = catalog.collections.imports;
    imports.findOneAndUpdate = async () => {
      throw new Error("the store went away");
    };
    await expect(run(false)).rejects.toThrow("the store went away");
    const [journal] = await imports.find({ organizationId: ORG_B });
    expect(journal?.status).toBe("undone");
    expect(calls.map((c) => [c.rpc, c.importId])).toEqual([
      ["import", journal?._id],
      ["undo", journal?._id],
    ]);
    expect(await orgB()).toEqual(before);
  });

  it("converts a promptfoo config first, its providers landing on the models here", async () => {
    const report = await createImportRun(catalog.bundles, () => peers)(
      { principal: userB },
      {
        organizationId: ORG_B,
        dryRun: true,
        document: { format: "promptfoo", config: "prompts: ['Say {{word}}']\nproviders: [openai:gpt-4o]\n" },
      },
    );
    expect(report.format).toBe("promptfoo");
    expect(report.summary.created).toBe(2);
    expect(report.warnings).toContainEqual(expect.stringMatching(/openai:gpt-4o is not a model here/));
  });
});
