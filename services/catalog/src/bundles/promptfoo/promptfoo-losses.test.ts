/**
 * What the promptfoo converter used to lose without a word (issue #50): a bare prompt file path
 * read as the prompt's text, a prompt's own `config.response_format`, numbers in `contains-any`,
 * `scenarios` and the tests inside them, a second prompt with the same text (one id twice, which
 * the real import refused after its dry run passed), and top-level settings it ignores. Each is now
 * imported, or reported by name.
 */
import { describe, expect, it } from "vitest";
import type { JsonObject } from "./config.js";
import { promptfooToBundle } from "./index.js";

const models = { ids: ["local/echo"], fallback: "local/echo" };
const convert = (config: JsonObject, files: Record<string, string> = {}) =>
  promptfooToBundle({ providers: ["echo"], ...config }, models, new Date(0), files);

describe("promptfoo imports without losses", () => {
  it("reads a bare prompts.txt as the file it names, and reports it when it was not sent", () => {
    const sent = convert({ prompts: ["prompts.txt"] }, { "prompts.txt": "Greet {{name}}\n---\nWave at {{name}}" });
    expect(sent.bundle.prompts.map((p) => p.versions[0]?.systemPrompt)).toEqual(["Greet {{name}}", "Wave at {{name}}"]);
    const missing = convert({ prompts: ["prompts/main.txt", "Hi {{name}}"] });
    expect(missing.bundle.prompts.map((p) => p.versions[0]?.systemPrompt)).toEqual(["Hi {{name}}"]);
    expect(missing.warnings).toContain(
      "prompts[0]: file://prompts/main.txt was not given with the config (import from the CLI or send it in files); the prompt is skipped",
    );
  });

  it("keeps a prompt's own config.response_format over its provider's, and reports its other settings", () => {
    const schema = { type: "object", properties: { answer: { type: "string" } } };
    const r = convert({
      prompts: [
        {
          raw: "Answer {{q}} as JSON",
          label: "json answer",
          config: { response_format: { type: "json_schema", json_schema: { name: "answer", schema } }, seed: 3 },
        },
        { raw: "Answer {{q}} plainly", config: { response_format: { type: "json_object" } } },
      ],
    });
    expect(r.bundle.prompts.map((p) => p.versions[0]?.responseFormat)).toEqual([
      { type: "json_schema", name: "answer", schema },
      { type: "json_schema", schema: { type: "object" } },
    ]);
    expect(r.warnings).toContain("prompts[0]: config.seed is not imported (only its response_format is)");
  });

  it("looks for the numbers of contains-any (negative ones too) as their text", () => {
    const r = convert({
      prompts: ["{{q}}"],
      tests: [
        {
          vars: { q: "x" },
          assert: [
            { type: "contains-any", value: [-3, 4.5, "ok"] },
            { type: "contains", value: 7 },
          ],
        },
      ],
    });
    const [anyOf, seven] = r.bundle.skills[0]?.evaluationCases[0]?.assertions ?? [];
    const pattern = new RegExp((anyOf as { pattern: string }).pattern);
    expect(["was -3", "4.5", "ok"].every((t) => pattern.test(t))).toBe(true);
    expect(pattern.test("3 4 5")).toBe(false);
    expect(seven).toEqual({ type: "contains", value: "7" });
  });

  it("imports scenarios: each test once per config entry, the entry's variables and assertions merged in", () => {
    const r = convert({
      prompts: ["Translate {{input}} to {{language}}"],
      scenarios: [
        {
          description: "translations",
          config: [
            { vars: { language: "French" }, assert: [{ type: "contains", value: "Bonjour" }] },
            { vars: { language: "Spanish" } },
          ],
          tests: [{ description: "hello", vars: { input: "Hello" } }, { vars: { input: "Bye", language: "German" } }],
        },
      ],
    });
    const cases = r.bundle.skills[0]?.evaluationCases ?? [];
    expect(cases.map((c) => [c.name, c.input, c.assertions.length])).toEqual([
      ["hello (translations, config 1)", { language: "French", input: "Hello" }, 1],
      ["test 2 (translations, config 1)", { language: "German", input: "Bye" }, 1],
      ["hello (translations, config 2)", { language: "Spanish", input: "Hello" }, 0],
      ["test 2 (translations, config 2)", { language: "German", input: "Bye" }, 0],
    ]);
  });

  it("imports two prompts with the same text once, reported, so that every id in the bundle is distinct", () => {
    const r = convert({ prompts: ["Hi {{name}}", { raw: "Hi {{name}}", label: "again" }, "Bye {{name}}"] });
    expect(r.bundle.prompts.map((p) => p.versions[0]?.systemPrompt)).toEqual(["Hi {{name}}", "Bye {{name}}"]);
    expect(r.warnings).toContain("prompts[1]: the same text as prompts[0]; imported once");
    const ids = [...r.bundle.prompts, ...r.bundle.skills].map((x) => x.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("reports each top-level setting it does not read by name", () => {
    const r = convert({ prompts: ["Hi"], env: { KEY: "x" }, outputPath: "out.json", redteam: {} });
    expect(r.warnings).toEqual(
      expect.arrayContaining([
        "env is not imported (Kiln has no such setting)",
        "outputPath is not imported (Kiln has no such setting)",
        "redteam is not imported (Kiln has no such setting)",
      ]),
    );
  });
});
