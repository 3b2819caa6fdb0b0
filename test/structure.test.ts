/**
 * The structure targets of docs/architecture.md "Measuring the structure", measured on the tree as
 * git sees it by scripts/structure-report.mjs: no import circles, at most ten production source
 * files over 300 lines, no test scaffolding under src/, and no comment that cites a document or
 * heading the repository does not have. The protobuf fields that carry JSON as a string (`…_json`,
 * and `kiln.common.v1.JsonText.json`, which every free-form user JSON field uses) are bounded by
 * today's count, which may only fall (the target was fifteen), see docs/architecture.md
 * "Measuring the structure" and "Free-form JSON on the wire".
 */
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const script = fileURLToPath(new URL("../scripts/structure-report.mjs", import.meta.url));
const report = JSON.parse(execFileSync(process.execPath, [script, "--json"], { encoding: "utf8" })) as {
  circles: string[][];
  arrowsBackUp: string[];
  filesOver300Lines: string[];
  jsonStringFields: string[];
  scaffoldingUnderSrc: string[];
  badDocReferences: string[];
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
