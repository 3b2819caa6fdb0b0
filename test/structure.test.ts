/**
 * The structure targets of docs/architecture.md "Measuring the structure", measured on the tree as
 * git sees it by scripts/structure-report.mjs: no import circles, at most ten production source
 * files over 300 lines, no test scaffolding under src/, and no comment that cites a document or
 * heading the repository does not have. The protobuf fields that carry JSON as a string (`…_json`,
 * and `kiln.common.v1.JsonText.json`, which every free-form user JSON field uses) are bounded by
 * today's count, which may only fall (the target was fifteen), see docs/architecture.md
 * "Measuring the structure" and "Free-form JSON on the wire". The cohesion measures (functions
 * over 80 own lines, production duplicate pairs) are reported, not yet held to a target: here only
 * their shape, and that a function's own lines leave out its nested functions'.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
// @ts-expect-error: a plain ES module of the report, without declarations.
import { functionsOf } from "../scripts/structure/function-lengths.mjs";

const script = fileURLToPath(new URL("../scripts/structure-report.mjs", import.meta.url));
const report = JSON.parse(execFileSync(process.execPath, [script, "--json"], { encoding: "utf8" })) as {
  circles: string[][];
  arrowsBackUp: string[];
  filesOver300Lines: string[];
  jsonStringFields: string[];
  scaffoldingUnderSrc: string[];
  badDocReferences: string[];
  functionsOver80OwnLines: string[];
  duplicatePairs: string[] | null;
};

describe("the structure of the tree", () => {
  it("has no import circles", () => {
    expect(report.circles).toEqual([]);
  });
  it("has no arrow back up: no library imports a service, the gateway or the launcher, no service another", () => {
    expect(report.arrowsBackUp).toEqual([]);
  });
  it("has at most ten production source files over 300 lines", () => {
    expect(report.filesOver300Lines.length, report.filesOver300Lines.join("\n")).toBeLessThanOrEqual(10);
  });
  it("adds no JSON strings to the protobuf contracts", () => {
    expect(report.jsonStringFields.length, report.jsonStringFields.join("\n")).toBeLessThanOrEqual(3);
  });
  it("has no test scaffolding under src/", () => {
    expect(report.scaffoldingUnderSrc).toEqual([]);
  });
  it("cites only documents and headings the repository has", () => {
    expect(report.badDocReferences).toEqual([]);
  });
});

describe("the cohesion measures", () => {
  it("reports functions over 80 own lines as file:line name (lines), and the duplicate pairs or none", () => {
    for (const f of report.functionsOver80OwnLines) expect(f).toMatch(/^\S+:\d+ \S.* \((8[1-9]|9\d|\d{3,})\)$/);
    expect(report.duplicatePairs === null || Array.isArray(report.duplicatePairs)).toBe(true);
  });

  it("counts a function's lines less those of the functions nested in it", () => {
    const dir = mkdtempSync(join(tmpdir(), "kiln-lengths-"));
    try {
      const body = (n: number) => Array.from({ length: n }, (_, i) => `  const v${i} = ${i};`).join("\n");
      const text = `export function outer() {\n${body(10)}\n  const inner = () => {\n${body(20)}\n  };\n}\n`;
      writeFileSync(join(dir, "a.ts"), text);
      const found = (functionsOf(dir, "a.ts") as { line: number; name: string; ownLines: number }[]).map(
        ({ line, name, ownLines }) => [line, name, ownLines],
      );
      // outer spans 34 lines, inner 22 of them.
      expect(found).toEqual([
        [1, "outer", 12],
        [12, "inner", 22],
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
