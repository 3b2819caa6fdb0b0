import { describe, expect, it } from "vitest";
import { checkAutoAdd, checkScoreConfigs, checkScores } from "./scores.js";

const config = (over: Partial<Parameters<typeof checkScoreConfigs>[0][number]>) => ({
  name: "s",
  kind: "boolean",
  options: [],
  required: false,
  ...over,
});

describe("a queue's score set", () => {
  it("keeps what each kind needs and names every bad field", () => {
    const ok = checkScoreConfigs(
      [
        config({ name: "correct", required: true }),
        config({ name: "quality", kind: "numeric", min: 1, max: 5 }),
        config({ name: "tone", kind: "categorical", options: ["kind", "curt"] }),
      ],
      "scoreConfigs",
    );
    expect(ok.issues).toEqual([]);
    expect(ok.configs).toEqual([
      { name: "correct", kind: "boolean", required: true },
      { name: "quality", kind: "numeric", min: 1, max: 5, required: false },
      { name: "tone", kind: "categorical", options: ["kind", "curt"], required: false },
    ]);
    const bad = checkScoreConfigs(
      [
        config({ name: "a b" }),
        config({ name: "n", kind: "numeric", min: 3, max: 3 }),
        config({ name: "n", kind: "categorical", options: ["x", "x"] }),
        config({ name: "k", kind: "stars" }),
        config({ name: "m", kind: "numeric" }),
      ],
      "scoreConfigs",
    );
    expect(bad.issues.map((i) => i.field)).toEqual([
      "scoreConfigs[0].name",
      "scoreConfigs[1].max",
      "scoreConfigs[2].name",
      "scoreConfigs[2].options",
      "scoreConfigs[3].kind",
      "scoreConfigs[4].min",
    ]);
  });

  it("checks an auto-add rule", () => {
    expect(checkAutoAdd({ kind: "skill", id: "skl_1", label: "", sampleRate: 0.5 }, "autoAdd").issues).toEqual([]);
    const bad = checkAutoAdd({ kind: "model", id: "", label: "", sampleRate: 1.5 }, "autoAdd");
    expect(bad.issues.map((i) => i.field)).toEqual(["autoAdd.kind", "autoAdd.id", "autoAdd.sampleRate"]);
  });
});

describe("a review's scores", () => {
  const configs = checkScoreConfigs(
    [
      config({ name: "correct", required: true }),
      config({ name: "quality", kind: "numeric", min: 1, max: 5 }),
      config({ name: "tone", kind: "categorical", options: ["kind", "curt"] }),
    ],
    "scoreConfigs",
  ).configs;

  it("accepts values of each kind, in range", () => {
    const scores = [
      { name: "correct", value: false },
      { name: "quality", value: 5 },
      { name: "tone", value: "curt" },
    ];
    expect(checkScores(configs, scores, "fine")).toEqual({ scores, issues: [] });
  });

  it("refuses unknown, repeated, mistyped, out-of-range and missing required scores, naming each", () => {
    const r = checkScores(
      configs,
      [
        { name: "quality", value: 0 },
        { name: "tone", value: "rude" },
        { name: "extra", value: true },
        { name: "tone", value: "kind" },
      ],
      "x".repeat(10_001),
    );
    expect(r.issues).toEqual([
      { field: "scores.quality", issue: "must be a number from 1 to 5" },
      { field: "scores.tone", issue: "must be one of kind, curt" },
      { field: "scores.extra", issue: "is not a score of this queue" },
      { field: "scores.tone", issue: "is given twice" },
      { field: "scores.correct", issue: "is required" },
      { field: "comment", issue: "must be at most 10000 characters" },
    ]);
    expect(checkScores(configs, [{ name: "correct", value: "yes" }], "").issues).toEqual([
      { field: "scores.correct", issue: "must be true or false" },
    ]);
  });
});
