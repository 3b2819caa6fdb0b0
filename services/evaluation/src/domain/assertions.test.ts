import { describe, expect, it } from "vitest";
import {
  type Assertion,
  checkAssertions,
  effectiveAssertions,
  evaluateAssertions,
  type Observation,
} from "./assertions.js";

const noJudge = async () => {
  throw new Error("no judge here");
};
const text = (t: string, extra: Partial<Observation> = {}): Observation => ({
  output: { text: t },
  latencyMs: 100,
  estimatedCostUsd: 0.01,
  ...extra,
});
const json = (value: unknown): Observation => ({
  output: { text: JSON.stringify(value), json: value },
  latencyMs: 100,
  estimatedCostUsd: 0.01,
});
const verdicts = async (assertions: Assertion[], observation: Observation) =>
  (await evaluateAssertions(assertions, observation, noJudge)).map((r) => r.passed);

describe("checkAssertions", () => {
  it("accepts every assertion type of api.md", () => {
    const all = [
      { type: "equals", value: { a: 1 } },
      { type: "contains", value: "x" },
      { type: "regex", pattern: "^h.*o$", flags: "i" },
      { type: "json_schema", schema: { type: "object", required: ["a"] } },
      { type: "json_path", path: "$.a.b[0]", equals: 1 },
      { type: "max_latency_ms", value: 0 },
      { type: "max_cost_usd", value: 0.5 },
      { type: "llm_judge", rubric: "polite", model: "local/echo", threshold: 0.7 },
    ];
    expect(checkAssertions(all, "cases[0].assertions")).toEqual({ assertions: all, issues: [] });
  });

  it("refuses a regular expression that does not compile, naming its pattern", () => {
    const { issues, assertions } = checkAssertions(
      [
        { type: "contains", value: "ok" },
        { type: "regex", pattern: "(unclosed" },
      ],
      "cases[2].assertions",
    );
    expect(assertions).toEqual([]);
    expect(issues).toHaveLength(1);
    expect(issues[0]?.field).toBe("cases[2].assertions[1].pattern");
    expect(issues[0]?.issue).toMatch(/missing closing \)/);
  });

  it("refuses bad flags, schemas, paths, limits, thresholds, unknown types and unknown fields", () => {
    const { issues } = checkAssertions(
      [
        { type: "regex", pattern: "a", flags: "q" },
        { type: "json_schema", schema: { type: "nonsense" } },
        { type: "json_path", path: "a.b", equals: 1 },
        { type: "json_path", path: "$.a[0", equals: 1 },
        { type: "max_latency_ms", value: -1 },
        { type: "max_cost_usd", value: "1" },
        { type: "llm_judge", rubric: "x", threshold: 1.5 },
        { type: "llm_judge" },
        { type: "similar", value: 1 },
        { type: "contains", value: "x", extra: true },
        { type: "contains", value: 3 },
      ],
      "a",
    );
    expect(issues.map((i) => i.field)).toEqual([
      "a[0].flags",
      "a[1].schema",
      "a[2].path",
      "a[3].path",
      "a[4].value",
      "a[5].value",
      "a[6].threshold",
      "a[7].rubric",
      "a[8].type",
      "a[9].extra",
      "a[10].value",
    ]);
  });

  it("refuses assertions that are not an array", () => {
    expect(checkAssertions({ type: "equals" }, "a").issues).toEqual([{ field: "a", issue: "must be an array" }]);
  });
});

describe("effectiveAssertions", () => {
  it("makes expectedOutput alone an equals assertion, and leaves explicit assertions alone", () => {
    expect(effectiveAssertions([], "hi")).toEqual([{ type: "equals", value: "hi" }]);
    expect(effectiveAssertions([], undefined)).toEqual([]);
    const own: Assertion[] = [{ type: "contains", value: "h" }];
    expect(effectiveAssertions(own, "hi")).toBe(own);
  });
});

describe("evaluateAssertions", () => {
  it("compares JSON values when both sides are JSON, text otherwise", async () => {
    expect(await verdicts([{ type: "equals", value: { b: 2, a: 1 } }], json({ a: 1, b: 2 }))).toEqual([true]);
    expect(await verdicts([{ type: "equals", value: '{"a":1}' }], text('{ "a": 1 }'))).toEqual([true]);
    expect(await verdicts([{ type: "equals", value: "hello" }], text("hello"))).toEqual([true]);
    expect(await verdicts([{ type: "equals", value: "hello" }], text("hello!"))).toEqual([false]);
    expect(await verdicts([{ type: "equals", value: { a: 1 } }], json({ a: 2 }))).toEqual([false]);
  });

  it("applies text assertions to the text, or to the JSON output serialized", async () => {
    expect(await verdicts([{ type: "contains", value: "lo W" }], text("Hello World"))).toEqual([true]);
    expect(await verdicts([{ type: "contains", value: '"city":"Paris"' }], json({ city: "Paris" }))).toEqual([true]);
    expect(await verdicts([{ type: "regex", pattern: "^hello", flags: "i" }], text("Hello"))).toEqual([true]);
    expect(await verdicts([{ type: "regex", pattern: "^hello" }], text("Hello"))).toEqual([false]);
  });

  it("validates the output with json_schema", async () => {
    const schema = { type: "object", properties: { n: { type: "integer" } }, required: ["n"] };
    expect(await verdicts([{ type: "json_schema", schema }], json({ n: 3 }))).toEqual([true]);
    const [bad] = await evaluateAssertions([{ type: "json_schema", schema }], json({ n: "3" }), noJudge);
    expect(bad?.passed).toBe(false);
    expect(bad?.message).toMatch(/\/n must be integer/);
  });

  it("reads json_path with jsonpath-plus: one match compares the value, several the list", async () => {
    const out = json({ items: [{ n: 1 }, { n: 2 }], city: { name: "Oslo" } });
    expect(await verdicts([{ type: "json_path", path: "$.city.name", equals: "Oslo" }], out)).toEqual([true]);
    expect(await verdicts([{ type: "json_path", path: "$.items[*].n", equals: [1, 2] }], out)).toEqual([true]);
    expect(await verdicts([{ type: "json_path", path: "$.city.name", equals: "Bergen" }], out)).toEqual([false]);
    const [missing] = await evaluateAssertions([{ type: "json_path", path: "$.nope", equals: 1 }], out, noJudge);
    expect(missing).toMatchObject({ passed: false, message: "$.nope matches nothing" });
    expect(await verdicts([{ type: "json_path", path: "$.a", equals: 1 }], text("not json"))).toEqual([false]);
  });

  it("checks latency and cost limits, failing an unknown cost", async () => {
    const limits: Assertion[] = [
      { type: "max_latency_ms", value: 100 },
      { type: "max_cost_usd", value: 0.005 },
    ];
    expect(await verdicts(limits, text("x"))).toEqual([true, false]);
    expect(await verdicts([{ type: "max_cost_usd", value: 1 }], text("x", { estimatedCostUsd: null }))).toEqual([
      false,
    ]);
  });

  it("passes an llm_judge at or above its threshold and fails it when the judge cannot answer", async () => {
    const judge = async () => ({ score: 0.6, reason: "fine" });
    const [low, high] = await evaluateAssertions(
      [
        { type: "llm_judge", rubric: "r", threshold: 0.7 },
        { type: "llm_judge", rubric: "r" },
      ],
      text("x"),
      judge,
    );
    expect([low?.passed, high?.passed]).toEqual([false, true]);
    const [failed] = await evaluateAssertions([{ type: "llm_judge", rubric: "r" }], text("x"), noJudge);
    expect(failed).toMatchObject({ passed: false });
    expect(failed?.message).toMatch(/could not grade/);
  });

  it("fails output assertions when the run produced no output", async () => {
    const none: Observation = { output: null, latencyMs: 1, estimatedCostUsd: 0 };
    expect(
      await verdicts(
        [
          { type: "contains", value: "" },
          { type: "max_latency_ms", value: 10 },
        ],
        none,
      ),
    ).toEqual([false, true]);
  });
});
