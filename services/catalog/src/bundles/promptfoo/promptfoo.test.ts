/**
 * The promptfoo converter on what the five example layouts (test/promptfoo-examples.test.ts) do
 * not show: JSON tests files, CSV shorthands and columns, chat prompts in files, code and globs,
 * Nunjucks filters Kiln has or leaves as text.
 */
import { describe, expect, it } from "vitest";
import type { JsonObject } from "./config.js";
import { promptfooToBundle } from "./index.js";
import { toMustache } from "./nunjucks.js";
import { assertionOfCell } from "./test-files.js";

const models = { ids: ["local/echo", "openai/gpt-4o"], fallback: "local/echo" };
const convert = (config: JsonObject, files: Record<string, string> = {}) =>
  promptfooToBundle({ providers: ["echo"], ...config }, models, new Date(0), files);

describe("promptfoo files", () => {
  it("reads chat prompts from JSON and YAML files, reports code and globs, and a JSON tests file", () => {
    const chat = JSON.stringify([
      { role: "system", content: "You answer in {{language}}." },
      { role: "user", content: "{{question}}" },
    ]);
    const r = convert(
      {
        prompts: ["file://./chat.json", "file://chat.yaml", "file://prompt.py:make", "file://prompts/*.txt"],
        tests: ["file://cases.json"],
        defaultTest: "file://default.yaml",
      },
      {
        "chat.json": chat,
        "./chat.yaml": "- role: system\n  content: Be brief about {{question}}\n",
        "cases.json": JSON.stringify([{ vars: { language: "French", question: "file://q.txt" } }]),
        "q.txt": "Why?",
        "default.yaml": "assert:\n  - type: equals\n    value: file://answer.json\n",
        "answer.json": '{"ok": true}',
      },
    );
    expect(r.bundle.prompts.map((p) => [p.name, p.versions[0]?.systemPrompt, p.versions[0]?.developerPrompt])).toEqual([
      ["chat.json", "You answer in {{language}}.", "{{question}}"],
      ["chat.yaml", "Be brief about {{question}}", null],
    ]);
    expect(r.warnings).toEqual([
      "prompts[2]: file://prompt.py:make is a prompt function, which Kiln does not run; skipped",
      "prompts[3]: file://prompts/*.txt is a glob, which is not expanded (list the files one by one); the prompt is skipped",
    ]);
    expect(r.bundle.skills[0]?.evaluationCases.map((c) => [c.input, c.assertions])).toEqual([
      [{ language: "French", question: "Why?" }, [{ type: "equals", value: { ok: true } }]],
    ]);
  });

  it("reads CSV rows as promptfoo does: __expected shorthands, __description, __metric; other __ columns reported", () => {
    const csv = [
      "q,__expected1,__expected2,__description,__metric,__prefix",
      'hi,"similar(0.8):hello","grade:is polite",greeting,Polite,>',
      "bye,not-contains:hello,plain text,,,",
    ].join("\n");
    const r = convert({ prompts: ["Say {{q}}"], tests: "file://t.csv" }, { "t.csv": csv });
    expect(r.bundle.skills[0]?.evaluationCases.map((c) => [c.name, c.input, c.assertions])).toEqual([
      ["greeting", { q: "hi" }, [{ type: "llm_judge", rubric: "is polite" }]],
      ["test 2", { q: "bye" }, [{ type: "equals", value: "plain text" }]],
    ]);
    expect(r.warnings).toEqual([
      "t.csv[0]: the column __prefix is not imported",
      't.csv[0].assert[0].metric "Polite" is not imported (Kiln reports each assertion by its place)',
      "t.csv[0].assert[0].threshold is not imported (similar has no threshold in Kiln)",
      "t.csv[0].assert[0]: similar is not imported (Kiln has no assertion that means the same)",
      't.csv[0].assert[1].metric "Polite" is not imported (Kiln reports each assertion by its place)',
      "t.csv[1].assert[0]: not-contains is not imported (Kiln has no negated assertions)",
    ]);
  });

  it("reads a JSONL tests file line by line; a grader provider here becomes the judge's model", () => {
    const jsonl = [
      '{"vars": {"q": "a"}, "assert": [{"type": "llm-rubric", "value": "ok", "provider": "openai:chat:gpt-4o"}]}',
      "",
      "not json",
    ].join("\n");
    const r = convert({ prompts: ["{{q}}"], tests: "file://t.jsonl" }, { "t.jsonl": jsonl });
    expect(r.bundle.skills[0]?.evaluationCases[0]?.assertions).toEqual([
      { type: "llm_judge", rubric: "ok", model: "openai/gpt-4o" },
    ]);
    expect(r.warnings).toEqual(["tests: file://t.jsonl line 3 is not JSON; skipped"]);
  });

  it("names the file of an assertion value it was not given, and skips that assertion only", () => {
    const r = convert({
      prompts: ["{{q}}"],
      tests: [
        {
          vars: { q: "a" },
          assert: [
            { type: "llm-rubric", value: "file://rubric.md" },
            { type: "contains", value: "a" },
          ],
        },
      ],
    });
    expect(r.bundle.skills[0]?.evaluationCases[0]?.assertions).toEqual([{ type: "contains", value: "a" }]);
    expect(r.warnings).toEqual([
      "tests[0].assert[0]: file://rubric.md was not given with the config (import from the CLI or send it in files); the assertion is skipped",
    ]);
  });
});

describe("Nunjucks filters", () => {
  it("keeps the filters Kiln's rendering has, drops trim (reported), leaves any other expression as text", () => {
    const warnings: string[] = [];
    expect(
      toMustache("{{ a | safe }} {{b|dump}} {{ c | trim }} {{ item.label }} {{#list}}x{{/list}}", "p", warnings),
    ).toBe("{{a}} {{b}} {{c}} {{ item.label }} {{#list}}x{{/list}}");
    expect(warnings).toEqual(['p: the filter "trim" of {{c}} is dropped (Kiln templates are Mustache)']);
    const kept = toMustache("{{ name | upper }} and {{ items[0] }}", "p", warnings);
    expect(kept).toBe("{{=<% %>=}}{{ name | upper }}<%={{ }}=%> and {{=<% %>=}}{{ items[0] }}<%={{ }}=%>");
    expect(warnings.slice(1)).toEqual([
      "p: {{ name | upper }} is a Nunjucks expression Kiln's Mustache templates cannot evaluate; it stays as text (not a variable)",
      "p: {{ items[0] }} is a Nunjucks expression Kiln's Mustache templates cannot evaluate; it stays as text (not a variable)",
    ]);
  });

  it("reads promptfoo's CSV assertion shorthands", () => {
    expect(assertionOfCell("icontains-any:a, b")).toEqual({ type: "icontains-any", value: ["a", "b"] });
    expect(assertionOfCell("is-json")).toEqual({ type: "is-json" });
    expect(assertionOfCell("fn:output.length > 1")).toEqual({ type: "javascript", value: "output.length > 1" });
    expect(assertionOfCell("Paris: the capital")).toEqual({ type: "equals", value: "Paris: the capital" });
  });
});
