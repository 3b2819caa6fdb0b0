import { describe, expect, it } from "vitest";
import { bindingValueOf, bindVariables, resolveBinding, type StepOutput } from "./bindings.js";

/** api.md "Skills": how a composition step's variables are bound to the input, earlier outputs or literals. */

const outputs = new Map<string, StepOutput>([
  [
    "forecast",
    {
      text: '{"summary":"Sunny","temp":{"c":21},"tags":["warm","dry"]}',
      json: { summary: "Sunny", temp: { c: 21 }, tags: ["warm", "dry"] },
    },
  ],
  ["plain", { text: "just text" }],
  ["nothing", { text: "null", json: null }],
]);

const input = { city: "Paris", days: 3, nested: { a: 1 } };

describe("bindingValueOf", () => {
  it("is the output's json when there is one, else its text", () => {
    expect(bindingValueOf({ text: "t", json: { a: 1 } })).toEqual({ a: 1 });
    expect(bindingValueOf({ text: "t" })).toBe("t");
    // A JSON null answer is still JSON, not "no json".
    expect(bindingValueOf({ text: "null", json: null })).toBeNull();
    expect(bindingValueOf({ text: "0", json: 0 })).toBe(0);
  });
});

describe("resolveBinding: every binding form", () => {
  it("{{input.x}} takes the skill input's field, with or without inner spaces", () => {
    expect(resolveBinding("{{input.city}}", input, outputs)).toBe("Paris");
    expect(resolveBinding("{{ input.days }}", input, outputs)).toBe(3);
    expect(resolveBinding("{{input.nested}}", input, outputs)).toEqual({ a: 1 });
  });

  it("{{steps.<alias>.output}} is the step's json, or its text when it answered text", () => {
    expect(resolveBinding("{{steps.forecast.output}}", input, outputs)).toEqual({
      summary: "Sunny",
      temp: { c: 21 },
      tags: ["warm", "dry"],
    });
    expect(resolveBinding("{{steps.plain.output}}", input, outputs)).toBe("just text");
    expect(resolveBinding("{{ steps.nothing.output }}", input, outputs)).toBeNull();
  });

  it("{{steps.<alias>.output.field…}} walks into the json output", () => {
    expect(resolveBinding("{{steps.forecast.output.summary}}", input, outputs)).toBe("Sunny");
    expect(resolveBinding("{{steps.forecast.output.temp.c}}", input, outputs)).toBe(21);
    expect(resolveBinding("{{steps.forecast.output.tags.1}}", input, outputs)).toBe("dry");
  });

  it("accepts every field name the catalog accepts in a binding ($, -, :, non-ASCII letters)", () => {
    // The catalog (skill-composition.ts) accepts `{{input.<anything but . space { }>}}` and the same
    // for output fields: a binding it saved must never be taken as literal text here.
    const odd = { $city: "Lyon", "ville-été": "Nice", "a:b": 1, "@id": "x" };
    expect(resolveBinding("{{input.$city}}", odd, outputs)).toBe("Lyon");
    expect(resolveBinding("{{input.ville-été}}", odd, outputs)).toBe("Nice");
    expect(resolveBinding("{{input.a:b}}", odd, outputs)).toBe(1);
    expect(resolveBinding("{{input.@id}}", odd, outputs)).toBe("x");
    const step = new Map<string, StepOutput>([["s_1", { text: "", json: { $value: 7, "prix-€": 2 } }]]);
    expect(resolveBinding("{{steps.s_1.output.$value}}", odd, step)).toBe(7);
    expect(resolveBinding("{{steps.s_1.output.prix-€}}", odd, step)).toBe(2);
  });

  it("a missing input field, step or output field resolves to undefined", () => {
    expect(resolveBinding("{{input.country}}", input, outputs)).toBeUndefined();
    expect(resolveBinding("{{input.nested.b}}", input, outputs)).toBeUndefined();
    expect(resolveBinding("{{steps.later.output}}", input, outputs)).toBeUndefined();
    expect(resolveBinding("{{steps.later.output.summary}}", input, outputs)).toBeUndefined();
    expect(resolveBinding("{{steps.forecast.output.wind}}", input, outputs)).toBeUndefined();
    expect(resolveBinding("{{steps.forecast.output.summary.length}}", input, outputs)).toBeUndefined();
    // A text output has no fields.
    expect(resolveBinding("{{steps.plain.output.length}}", input, outputs)).toBeUndefined();
    expect(resolveBinding("{{steps.nothing.output.x}}", input, outputs)).toBeUndefined();
  });

  it("never reads inherited properties: prototype names are missing fields", () => {
    for (const name of ["__proto__", "constructor", "toString", "hasOwnProperty"]) {
      expect(resolveBinding(`{{input.${name}}}`, input, outputs)).toBeUndefined();
      expect(resolveBinding(`{{steps.forecast.output.${name}}}`, input, outputs)).toBeUndefined();
    }
  });

  it("anything else is a literal, kept as it is", () => {
    for (const literal of [
      42,
      0,
      -1.5,
      true,
      false,
      null,
      { city: "{{input.city}}", n: [1, 2] },
      [1, "{{input.city}}"],
      "plain text",
      "",
      "Hello {{input.city}}",
      "{{input.city}} and more",
      "{{inputs.city}}",
    ]) {
      expect(resolveBinding(literal, input, outputs)).toEqual(literal);
    }
  });
});

describe("bindVariables", () => {
  it("binds the declared variables: bound ones by their binding, the others from the same-named input field", () => {
    const variables = bindVariables(
      ["city", "summary", "tone", "days", "limits", "flag", "nothing"],
      {
        summary: "{{steps.forecast.output.summary}}",
        tone: "friendly",
        limits: { max: 3, units: ["km"] },
        flag: false,
        nothing: null,
      },
      input,
      outputs,
    );
    expect(variables).toEqual({
      city: "Paris",
      summary: "Sunny",
      tone: "friendly",
      days: 3,
      limits: { max: 3, units: ["km"] },
      flag: false,
      nothing: null,
    });
  });

  it("binds numbers and objects as literals of their own type", () => {
    const variables = bindVariables(["n", "obj"], { n: 7.5, obj: { a: { b: [1] } } }, {}, outputs);
    expect(variables.n).toBe(7.5);
    expect(variables.obj).toEqual({ a: { b: [1] } });
  });

  it("leaves a variable absent when its step, its field or its input field does not exist", () => {
    const variables = bindVariables(
      ["a", "b", "c", "d"],
      { a: "{{steps.missing.output}}", b: "{{steps.forecast.output.nope}}", c: "{{input.nope}}" },
      input,
      outputs,
    );
    expect(variables).toEqual({});
    expect(Object.keys(variables)).toEqual([]);
    for (const name of ["a", "b", "c", "d"]) expect(Object.hasOwn(variables, name)).toBe(false);
  });

  it("binds only declared variables, whatever the bindings and the input hold", () => {
    expect(bindVariables(["city"], { other: "x" }, { city: "Paris", extra: 1 }, outputs)).toEqual({ city: "Paris" });
    expect(bindVariables([], { city: "x" }, input, outputs)).toEqual({});
  });

  it("keeps a binding to a later or missing step absent rather than using the input of the same name", () => {
    // The variable is bound: an unresolvable binding does not fall back to the input field.
    expect(bindVariables(["city"], { city: "{{steps.later.output}}" }, input, outputs)).toEqual({});
  });

  it("keeps __proto__-named variables as data", () => {
    // What JSON.parse makes of user JSON: own "__proto__" properties.
    const declared = Object.keys(JSON.parse('{"__proto__": {"type": "string"}, "constructor": {}, "city": {}}'));
    expect(declared).toEqual(["__proto__", "constructor", "city"]);
    const userInput = JSON.parse('{"__proto__": {"polluted": true}, "constructor": "c", "city": "Oslo"}') as Record<
      string,
      unknown
    >;
    const fromInput = bindVariables(declared, {}, userInput, outputs);
    expect(Object.getPrototypeOf(fromInput)).toBe(Object.prototype);
    expect(Object.hasOwn(fromInput, "__proto__")).toBe(true);
    expect(Object.getOwnPropertyDescriptor(fromInput, "__proto__")?.value).toEqual({ polluted: true });
    expect((fromInput as { polluted?: unknown }).polluted).toBeUndefined();
    expect(fromInput.constructor).toBe("c");
    expect(JSON.stringify(fromInput)).toBe('{"__proto__":{"polluted":true},"constructor":"c","city":"Oslo"}');
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();

    // Bound by a binding, and bound to a literal.
    const bindings = JSON.parse('{"__proto__": "{{input.city}}", "constructor": {"x": 1}}') as Record<string, unknown>;
    const bound = bindVariables(["__proto__", "constructor"], bindings, userInput, outputs);
    expect(Object.getPrototypeOf(bound)).toBe(Object.prototype);
    expect(JSON.stringify(bound)).toBe('{"__proto__":"Oslo","constructor":{"x":1}}');

    // An inherited "__proto__" is not a binding: without an own binding or input field, it stays absent.
    const absent = bindVariables(["__proto__", "toString"], {}, { city: "x" }, outputs);
    expect(Object.keys(absent)).toEqual([]);
    expect(Object.getPrototypeOf(absent)).toBe(Object.prototype);
  });

  it("binds a __proto__ field of a step's json output as data", () => {
    const step = new Map<string, StepOutput>([["a", { text: "", json: JSON.parse('{"__proto__": {"x": 1}}') }]]);
    const variables = bindVariables(["v"], { v: "{{steps.a.output.__proto__}}" }, {}, step);
    expect(variables).toEqual({ v: { x: 1 } });
    const whole = bindVariables(["v"], { v: "{{steps.a.output}}" }, {}, step);
    expect(JSON.stringify(whole)).toBe('{"v":{"__proto__":{"x":1}}}');
  });
});
