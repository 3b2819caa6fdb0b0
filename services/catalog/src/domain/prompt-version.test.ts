import { DomainError } from "@kiln/kit/errors";
import { describe, expect, it } from "vitest";
import { Issues } from "./issues.js";
import { checkPromptVersion, type PromptVersionInput, parseResponseFormat } from "./prompt-version.js";

function check(input: PromptVersionInput) {
  const issues = new Issues();
  const content = checkPromptVersion(issues, input);
  try {
    issues.throwIfAny();
    return { content, details: [] };
  } catch (e) {
    if (!(e instanceof DomainError)) throw e;
    return { content, details: e.details };
  }
}

describe("checkPromptVersion", () => {
  it("fills the defaults and keeps JSON text as given", () => {
    expect(check({ systemPrompt: "Be brief." })).toEqual({
      content: {
        systemPrompt: "Be brief.",
        developerPrompt: null,
        variablesSchema: '{"type":"object"}',
        responseFormat: '{"type":"text"}',
        temperature: null,
        maxOutputTokens: null,
      },
      details: [],
    });
    const schema = '{ "type": "object", "properties": { "city": { "type": "string" } } }';
    expect(check({ systemPrompt: "{{city}}", variablesSchemaJson: schema }).content.variablesSchema).toBe(schema);
  });

  it("accepts a json_schema response format, sampling settings at their bounds and a model id", () => {
    const { details } = check({
      systemPrompt: "x",
      responseFormatJson: '{"type":"json_schema","name":"answer","schema":{"type":"object"}}',
      temperature: 2,
      maxOutputTokens: 128_000,
      model: "openai/gpt-4o-mini",
    });
    expect(details).toEqual([]);
  });

  it("reports every problem at once", () => {
    const { details } = check({
      systemPrompt: "",
      developerPrompt: "{{missing}}",
      variablesSchemaJson: '{"type":"object","properties":{"city":{"type":"strin"}}}',
      responseFormatJson: '{"type":"json_schema","schema":{"type":7},"strict":true}',
      temperature: 2.5,
      maxOutputTokens: 0,
      model: "gpt-4o",
    });
    expect(details).toEqual([
      { field: "systemPrompt", issue: "is required" },
      { field: "variablesSchema.properties.city.type", issue: expect.stringMatching(/^must be one of/) },
      { field: "responseFormat.strict", issue: "is not a field of a json_schema response format" },
      { field: "responseFormat.schema.type", issue: expect.stringMatching(/^must be one of/) },
      { field: "temperature", issue: "must be a number from 0 to 2" },
      { field: "maxOutputTokens", issue: "must be an integer from 1 to 128000" },
      { field: "model", issue: 'must be a model id such as "openai/gpt-4o-mini"' },
    ]);
  });

  it("checks templates against the variables schema", () => {
    expect(check({ systemPrompt: "Hi {{name}}", developerPrompt: "{{#x}}" }).details).toEqual([
      { field: "systemPrompt", issue: 'uses {{name}}, but variablesSchema declares no variable "name"' },
      { field: "developerPrompt", issue: expect.stringMatching(/^is not a valid template/) },
    ]);
  });

  it("refuses malformed response formats", () => {
    expect(check({ systemPrompt: "x", responseFormatJson: '{"type":"xml"}' }).details).toEqual([
      { field: "responseFormat.type", issue: "must be text or json_schema" },
    ]);
    expect(check({ systemPrompt: "x", responseFormatJson: '{"type":"json_schema","name":"a b"}' }).details).toEqual([
      { field: "responseFormat.name", issue: "must be 1 to 64 letters, digits, _ or -" },
      { field: "responseFormat.schema", issue: "is required" },
    ]);
    expect(check({ systemPrompt: "x", responseFormatJson: '{"type":"text","schema":{}}' }).details).toEqual([
      { field: "responseFormat.schema", issue: "is not a field of a text response format" },
    ]);
    expect(check({ systemPrompt: "x", variablesSchemaJson: '{"type":"array"}' }).details).toEqual([
      { field: "variablesSchema.type", issue: 'must be "object"' },
    ]);
  });
});

describe("parseResponseFormat", () => {
  it("reads stored formats", () => {
    expect(parseResponseFormat('{"type":"text"}')).toEqual({ type: "text" });
    expect(parseResponseFormat('{"type":"json_schema","name":"n","schema":{"type":"object"}}')).toEqual({
      type: "json_schema",
      name: "n",
      schema: { type: "object" },
    });
  });
});
