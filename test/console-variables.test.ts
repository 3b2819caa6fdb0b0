/**
 * The console's variables logic (console/src/variables.ts): what the prompt editor detects in a
 * template, the schema it scaffolds and the preview it renders with sample values.
 */
import { describe, expect, it } from "vitest";
import {
  detectVariables,
  effectiveSpecs,
  parseSchema,
  renderPreview,
  schemaWith,
  specsOf,
} from "../console/src/variables.js";

describe("the prompt editor's variables", () => {
  it("detects the top-level names Mustache parses, sections optional, once each", () => {
    expect(
      detectVariables(["Hi {{user.name}} {{topic}}{{#notes}}: {{notes}}{{/notes}}", "{{^quiet}}{{{topic}}}{{/quiet}}"]),
    ).toEqual({
      variables: [
        { name: "user", optional: false },
        { name: "topic", optional: false },
        { name: "notes", optional: true },
        { name: "quiet", optional: true },
      ],
    });
    expect(detectVariables(["{{#open}} never closed"]).error).toMatch(/Unclosed section "open"/);
  });

  it("scaffolds undeclared variables as required text that refuses empty, keeping what the form does not show", () => {
    const typed = parseSchema(
      '{"type":"object","properties":{"n":{"type":"integer","maximum":3},"tags":{"type":"array"}},"required":[],"additionalProperties":false}',
    ).schema;
    expect(typed).toBeDefined();
    const specs = effectiveSpecs(typed ?? {}, [
      { name: "n", optional: false },
      { name: "topic", optional: false },
      { name: "notes", optional: true },
    ]);
    expect(schemaWith(typed ?? {}, specs)).toEqual({
      type: "object",
      properties: {
        n: { type: "integer", maximum: 3 },
        tags: { type: "array" },
        topic: { type: "string", minLength: 1 },
        notes: { type: "string" },
      },
      required: ["topic"],
      additionalProperties: false,
    });
    // Unticking required lets the empty value through again; the form round-trips the schema.
    const optional = specs.map((s) => (s.name === "topic" ? { ...s, required: false } : s));
    const schema = schemaWith(typed ?? {}, optional);
    expect(schema.properties).toMatchObject({ topic: { type: "string" } });
    expect(schema.required).toEqual([]);
    expect(schemaWith(schema, specsOf(schema))).toEqual(schema);
    expect(parseSchema("[1]").issue).toBe("must be a JSON object");
    expect(parseSchema('{"type":"string"}').issue).toBe('must be a schema of "type": "object"');
    expect(parseSchema("{ no").issue).toMatch(/^is not JSON/);
  });

  it("renders the preview without HTML escaping, each value marked, a missing one as its placeholder", () => {
    const specs = effectiveSpecs({ type: "object" }, [
      { name: "topic", optional: false },
      { name: "audience", optional: false },
    ]);
    expect(renderPreview("Explain {{topic}} to {{audience}}.", specs, { topic: "<tides> & moons" })).toEqual([
      { text: "Explain ", variable: false },
      { text: "<tides> & moons", variable: true },
      { text: " to ", variable: false },
      { text: "{{audience}}", variable: true },
      { text: ".", variable: false },
    ]);
  });
});
