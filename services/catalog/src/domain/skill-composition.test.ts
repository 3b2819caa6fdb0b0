import { DomainError } from "@kiln/kit/errors";
import { describe, expect, it } from "vitest";
import { Issues } from "./issues.js";
import type { JsonObject } from "./json-schema.js";
import {
  checkAliases,
  checkBindings,
  deriveSkillSchemas,
  inlineLocalRefs,
  parseBinding,
  type StepContract,
} from "./skill-composition.js";

function detailsOf(run: (issues: Issues) => void) {
  const issues = new Issues();
  run(issues);
  try {
    issues.throwIfAny();
    return [];
  } catch (e) {
    if (!(e instanceof DomainError)) throw e;
    return e.details;
  }
}

const weather: StepContract = {
  alias: "weather",
  variables: {},
  variablesSchema: {
    type: "object",
    properties: { city: { type: "string" }, days: { type: "integer" } },
    required: ["city"],
  },
  responseFormat: {
    type: "json_schema",
    schema: { type: "object", properties: { summary: { type: "string" } }, required: ["summary"] },
  },
};

const poem = (variables: JsonObject, alias = "poem"): StepContract => ({
  alias,
  variables,
  variablesSchema: {
    type: "object",
    properties: { topic: { type: "string" }, tone: { enum: ["calm", "wild"] }, city: { type: "string" } },
    required: ["topic", "tone"],
  },
  responseFormat: { type: "text" },
});

describe("parseBinding", () => {
  it("reads input, step output and step field bindings, and literals", () => {
    expect(parseBinding("{{input.city}}")).toEqual({ kind: "input", field: "city" });
    expect(parseBinding("{{ input.city }}")).toEqual({ kind: "input", field: "city" });
    expect(parseBinding("{{steps.weather.output}}")).toEqual({ kind: "step", alias: "weather", path: [] });
    expect(parseBinding("{{steps.weather.output.summary.text}}")).toEqual({
      kind: "step",
      alias: "weather",
      path: ["summary", "text"],
    });
    expect(parseBinding("calm")).toEqual({ kind: "literal", value: "calm" });
    expect(parseBinding(3)).toEqual({ kind: "literal", value: 3 });
    expect(parseBinding({ a: "{{input.x}}" })).toEqual({ kind: "literal", value: { a: "{{input.x}}" } });
  });

  it("refuses strings that look like bindings but are none", () => {
    for (const text of ["{{inputs.city}}", "{{input.a.b}}", "{{steps.w.result}}", "Hi {{input.city}}", "{{input.}}"]) {
      expect(parseBinding(text).kind).toBe("invalid");
    }
  });
});

describe("checkAliases", () => {
  it("defaults aliases to step<order> and refuses malformed or repeated ones", () => {
    let aliases: string[] = [];
    expect(detailsOf((i) => (aliases = checkAliases(i, "prompts", [undefined, "summary", undefined])))).toEqual([]);
    expect(aliases).toEqual(["step1", "summary", "step3"]);
    expect(detailsOf((i) => checkAliases(i, "prompts", ["step2", undefined, "9lives"]))).toEqual([
      { field: "prompts[1].alias", issue: '"step2" is already the alias of prompts[0]' },
      { field: "prompts[2].alias", issue: "must start with a letter or _ and hold at most 64 letters, digits or _" },
    ]);
  });
});

describe("checkBindings", () => {
  it("accepts bindings to input, earlier steps and their declared output fields, and literals", () => {
    const steps = [weather, poem({ topic: "{{steps.weather.output.summary}}", tone: "calm", city: "{{input.town}}" })];
    expect(detailsOf((i) => checkBindings(i, "prompts", steps))).toEqual([]);
  });

  it("refuses undeclared variables, later or unknown steps, and fields a step cannot output", () => {
    const steps = [
      poem({ topic: "{{steps.weather.output}}", mood: "x" }, "first"),
      weather,
      poem(
        { topic: "{{steps.first.output.title}}", tone: "{{steps.weather.output.rain}}", city: "{{steps.nope.output}}" },
        "third",
      ),
    ];
    expect(detailsOf((i) => checkBindings(i, "prompts", steps))).toEqual([
      { field: "prompts[0].variables.topic", issue: 'refers to step "weather", which does not come before this step' },
      {
        field: "prompts[0].variables.mood",
        issue: "is not a variable declared by this prompt version's variablesSchema",
      },
      { field: "prompts[2].variables.topic", issue: 'step "first" answers text, which has no field "title"' },
      { field: "prompts[2].variables.tone", issue: 'the output schema of step "weather" has no field "rain"' },
      { field: "prompts[2].variables.city", issue: 'refers to step "nope", which does not come before this step' },
    ]);
  });

  it("refuses a step bound to itself and malformed binding strings", () => {
    const steps = [poem({ topic: "{{steps.poem.output}}", tone: "{{inputs.tone}}" })];
    expect(detailsOf((i) => checkBindings(i, "prompts", steps)).map((d) => d.field)).toEqual([
      "prompts[0].variables.topic",
      "prompts[0].variables.tone",
    ]);
  });
});

describe("deriveSkillSchemas", () => {
  it("derives the input from unbound and input-bound variables and the output from the last step", () => {
    const steps = [weather, poem({ topic: "{{steps.weather.output.summary}}", tone: "calm", city: "{{input.city}}" })];
    expect(deriveSkillSchemas(steps)).toEqual({
      inputSchema: {
        type: "object",
        properties: { city: { type: "string" }, days: { type: "integer" } },
        required: ["city"],
      },
      outputSchema: { type: "string" },
    });
  });

  it("renames fields through input bindings, requires them when a step does, and ends on a json_schema output", () => {
    const steps = [poem({ topic: "{{input.subject}}" }), { ...weather, variables: { days: 2 } }];
    const { inputSchema, outputSchema } = deriveSkillSchemas(steps);
    expect(inputSchema).toEqual({
      type: "object",
      properties: { subject: { type: "string" }, tone: { enum: ["calm", "wild"] }, city: { type: "string" } },
      required: ["subject", "tone", "city"],
    });
    expect(outputSchema).toEqual(weather.responseFormat.type === "json_schema" ? weather.responseFormat.schema : null);
  });

  it("combines different schemas of one input field with allOf", () => {
    const other: StepContract = {
      ...weather,
      alias: "w2",
      variablesSchema: { type: "object", properties: { city: { minLength: 2 } } },
    };
    expect(deriveSkillSchemas([weather, other]).inputSchema.properties).toEqual({
      city: { allOf: [{ type: "string" }, { minLength: 2 }] },
      days: { type: "integer" },
    });
  });

  it("gives an empty composition an empty object input and a string output", () => {
    expect(deriveSkillSchemas([])).toEqual({
      inputSchema: { type: "object", properties: {} },
      outputSchema: { type: "string" },
    });
  });

  it("inlines local $refs so lifted variable schemas keep their meaning, and keeps __proto__ as a field", () => {
    const variablesSchema = JSON.parse(
      '{"type":"object","properties":{"__proto__":{"$ref":"#/$defs/city","description":"d"},"tree":{"$ref":"#/$defs/node"}},' +
        '"$defs":{"city":{"type":"string"},"node":{"type":"object","properties":{"child":{"$ref":"#/$defs/node"}}}}}',
    );
    const step: StepContract = { alias: "s", variables: {}, variablesSchema, responseFormat: { type: "text" } };
    const { inputSchema } = deriveSkillSchemas([step]);
    expect(JSON.stringify(inputSchema)).toBe(
      '{"type":"object","properties":{"__proto__":{"allOf":[{"type":"string"},{"description":"d"}]},' +
        '"tree":{"type":"object","properties":{"child":{}}}}}',
    );
  });
});

describe("inlineLocalRefs", () => {
  it("leaves references it cannot resolve locally as they are", () => {
    expect(inlineLocalRefs({ $ref: "https://example.com/s" }, {})).toEqual({ $ref: "https://example.com/s" });
    expect(inlineLocalRefs({ $ref: "#/$defs/missing" }, {})).toEqual({ $ref: "#/$defs/missing" });
  });
});
