/**
 * `ResolvedPrompt.render`: the variables checked against the version's schema (errors named as a
 * run names them), the templates filled as the execution service fills them (Mustache, no HTML
 * escaping, non-strings as JSON), and the version's settings beside the messages.
 */
import { describe, expect, it } from "vitest";
import { KilnError } from "./kiln-error.js";
import { compileTemplates } from "./prompt-render.js";
import { type PromptFallback, ResolvedPrompt } from "./resolved-prompt.js";

const resolved = (content: PromptFallback) =>
  new ResolvedPrompt({ fallback: content, cause: undefined }, compileTemplates);

/** The KilnError a render throws. */
function renderError(prompt: ResolvedPrompt, variables: unknown): KilnError {
  try {
    prompt.render(variables as Record<string, unknown>);
  } catch (e) {
    expect(e).toBeInstanceOf(KilnError);
    return e as KilnError;
  }
  throw new Error("expected the render to fail");
}

describe("render", () => {
  it("fills system and developer templates without HTML escaping, non-strings as JSON", () => {
    const prompt = resolved({
      systemPrompt: "Weather for {{city}} <b>{{#days}}[{{.}}]{{/days}}</b> {{meta}} {{missing}}{{constructor}}",
      developerPrompt: "Answer in {{lang}} & {{unit}}",
    });
    const rendered = prompt.render(
      { city: "Tōkyō & <Ōsaka>", days: [1, 2], meta: { a: 1 }, lang: "fr", unit: null },
      { messages: [{ role: "user", content: "and tomorrow?" }] },
    );
    expect(rendered.messages).toEqual([
      { role: "system", content: 'Weather for Tōkyō & <Ōsaka> <b>[1][2]</b> {"a":1} ' },
      { role: "developer", content: "Answer in fr & " },
      { role: "user", content: "and tomorrow?" },
    ]);
  });

  it("fills every message of a chat version and puts the caller's messages at its placeholder", () => {
    const prompt = resolved({
      messages: [
        { role: "system", content: "You are {{persona}}." },
        { role: "user", content: "Translate cat." },
        { role: "assistant", content: "Katze ({{persona}})" },
        { role: "placeholder", name: "history" },
        { role: "placeholder", name: "notes" },
        { role: "user", content: "Translate {{word}}." },
      ],
    });
    const notes = [{ role: "developer", content: "from a variable" }];
    const rendered = prompt.render(
      { persona: "a linguist", word: "dog", notes },
      { messages: [{ role: "user", content: "Translate bird." }] },
    );
    expect(rendered.messages).toEqual([
      { role: "system", content: "You are a linguist." },
      { role: "user", content: "Translate cat." },
      { role: "assistant", content: "Katze (a linguist)" },
      { role: "user", content: "Translate bird." },
      { role: "developer", content: "from a variable" },
      { role: "user", content: "Translate dog." },
    ]);
    // Without a placeholder, the caller's messages follow the template's.
    const plain = resolved({ messages: [{ role: "user", content: "Hi {{name}}." }] });
    expect(plain.render({ name: "Ada" }, { messages: [{ role: "assistant", content: "Hello" }] }).messages).toEqual([
      { role: "user", content: "Hi Ada." },
      { role: "assistant", content: "Hello" },
    ]);
  });

  it("answers the version's settings; a json_schema format always has a name", () => {
    const schema = { type: "object", properties: { answer: { type: "string" } } };
    const rendered = resolved({
      systemPrompt: "x",
      developerPrompt: "",
      responseFormat: { type: "json_schema", schema },
      temperature: 0.2,
      maxOutputTokens: 64,
      model: "openai/gpt-4o-mini",
    }).render();
    expect(rendered).toEqual({
      messages: [{ role: "system", content: "x" }],
      model: "openai/gpt-4o-mini",
      temperature: 0.2,
      maxOutputTokens: 64,
      responseFormat: { type: "json_schema", name: "response", schema },
      tools: [],
      promptId: null,
      versionId: null,
      isFallback: true,
    });
  });

  it("refuses variables that do not match the schema, naming each field as a run does", () => {
    const prompt = resolved({
      systemPrompt: "{{city}}",
      variablesSchema: {
        type: "object",
        properties: {
          city: { type: "string", minLength: 2 },
          unit: { enum: ["C", "F"] },
          email: { type: "string", format: "email" },
          days: { type: "array", items: { type: "integer" } },
        },
        required: ["city"],
        additionalProperties: false,
      },
    });
    const error = renderError(prompt, { unit: "K", email: "nope", days: [1, "2"], extra: true });
    expect(error).toMatchObject({ status: 400, code: "invalid_argument", requestId: undefined });
    expect(error.message).toBe("the variables do not match the version's variables schema");
    expect(error.details).toEqual(
      expect.arrayContaining([
        { field: "variables.city", issue: "is required" },
        { field: "variables.extra", issue: "is not allowed" },
        { field: "variables.unit", issue: 'must be one of "C", "F"' },
        { field: "variables.email", issue: 'must match format "email"' },
        { field: "variables.days[1]", issue: "must be integer" },
      ]),
    );
    expect(error.details).toHaveLength(5);
    expect(renderError(prompt, [1]).details).toEqual([{ field: "variables", issue: "must be an object" }]);
    expect(prompt.render({ city: "Oslo", unit: "C", email: "a@b.test", days: [1] }).messages[0]?.content).toBe("Oslo");
  });

  it("runs the schema's patterns with RE2, as the platform does: linear time, no lookaround", () => {
    // JavaScript's RegExp backtracks for seconds on this; RE2 answers at once.
    const nested = resolved({
      systemPrompt: "{{code}}",
      variablesSchema: { properties: { code: { pattern: "^(a+)+$" } } },
    });
    const started = performance.now();
    expect(renderError(nested, { code: `${"a".repeat(30)}b` }).details).toEqual([
      { field: "variables.code", issue: 'must match pattern "^(a+)+$"' },
    ]);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(nested.render({ code: "aaa" }).messages[0]?.content).toBe("aaa");
    // A pattern RE2 cannot run (the platform refuses it when a version is saved) is not run here either.
    const lookahead = resolved({ systemPrompt: "", variablesSchema: { properties: { code: { pattern: "a(?=b)" } } } });
    expect(() => lookahead.render({ code: "ab" })).toThrow(/linear time/);
  });
});

describe("partials", () => {
  const content = (template: string) => ({
    systemPrompt: template,
    developerPrompt: null,
    variablesSchema: { type: "object" },
  });

  it("fills {{> name}} and {{> name@label}} with the included texts, rendered with the same variables", () => {
    const filler = compileTemplates({
      ...content("Hi {{name}}.\n  {{> tone}}\n{{> team/sign@staging}}"),
      partials: [
        { name: "tone", label: "production", template: "Be {{mood}}.\nAlways." },
        { name: "team/sign", label: "staging", template: "- {{name}}" },
      ],
    });
    expect(filler.render({ name: "Ada", mood: "kind" })).toEqual([
      { role: "system", content: "Hi Ada.\n  Be kind.\n  Always.\n- Ada" },
    ]);
    // `a@production` is `a`; a tag nothing was read for renders nothing.
    const same = compileTemplates({
      ...content("[{{> tone@production}}][{{> other}}]"),
      partials: [{ name: "tone", label: "production", template: "t" }],
    });
    expect(same.render({})).toEqual([{ role: "system", content: "[t][]" }]);
  });

  it("refuses to render a version whose include does not resolve, as its run fails", () => {
    const filler = compileTemplates({
      ...content("{{> gone}}"),
      unresolvedPartial: {
        reference: "gone",
        message: 'the partial {{> gone}} does not resolve: no prompt is named "gone"',
      },
    });
    let error: unknown;
    try {
      filler.render({});
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(KilnError);
    expect(error).toMatchObject({ status: 409, code: "failed_precondition", message: expect.stringContaining("gone") });
  });
});
