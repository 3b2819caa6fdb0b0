import { describe, expect, it } from "vitest";
import { checkNewCases } from "./new-cases.js";

describe("checkNewCases", () => {
  it("keeps the JSON text of valid cases and defaults assertions to []", () => {
    const { cases, issues } = checkNewCases([{ inputJson: '{"city":"Oslo"}', expectedOutputJson: '"hi"' }]);
    expect(issues).toEqual([]);
    expect(cases).toEqual([
      { name: "", inputJson: '{"city":"Oslo"}', expectedOutputJson: '"hi"', assertionsJson: "[]" },
    ]);
  });

  it("reports every problem of every case, and returns no case", () => {
    const { cases, issues } = checkNewCases([
      { inputJson: '{"ok":true}' },
      { inputJson: "[1]", expectedOutputJson: "{", assertions: [{ type: "regex", pattern: "[" }] },
      { inputJson: "nope", assertions: "not an array" },
    ]);
    expect(cases).toEqual([]);
    expect(issues.map((i) => i.field)).toEqual([
      "cases[1].input",
      "cases[1].expectedOutput",
      "cases[1].assertions[0].pattern",
      "cases[2].input",
      "cases[2].assertions",
    ]);
  });

  it("refuses an empty batch", () => {
    expect(checkNewCases([]).issues).toEqual([{ field: "cases", issue: "must hold at least one case" }]);
  });
});
