import fc from "fast-check";
import Mustache from "mustache";
import { describe, expect, it } from "vitest";
import {
  createTemplateRenderer,
  MAX_PARTIAL_DEPTH,
  PartialDepthError,
  type PartialLookup,
  renderPrompt,
} from "./prompt-template.js";

const outcome = (render: () => unknown) => {
  try {
    return { text: render() };
  } catch (e) {
    return { error: e instanceof Error ? e.message : String(e) };
  }
};

/** A prompt template filled as a run fills it, on one renderer (its depth counter shared, as in a process). */
const shared = createTemplateRenderer(new Map());
const fill = (template: string, variables: Record<string, unknown>, partials?: PartialLookup) =>
  renderPrompt(shared, template, variables, partials);

/** Pieces templates are made of: text, blanks, line ends, tags of every kind, broken tags. */
const piece = fc.oneof(
  fc.constantFrom("x", "hello world", "  ", "\t", "\n", "\r\n", " \n", "}", "}}", "{", "{ {", "é", "😀", "\u2028"),
  fc.constantFrom("a", "b", "c", "a.b", ".").map((n) => `{{${n}}}`),
  fc
    .constantFrom("a", "b", "c")
    .chain((n) => fc.constantFrom(`{{#${n}}}`, `{{/${n}}}`, `{{^${n}}}`, `{{ # ${n} }}`, `{{/ ${n}}}`)),
  fc.constantFrom("{{&a}}", "{{{a}}}", "{{ {a} }}", "{{! a comment }}", "{{!}}", "{{}}", "{{ }}", "{{{}}}"),
  fc.constantFrom("{{", "{{a", "{{{a}}", "{{#a", "}}}", "{{>p}}", "{{=<% %>=}}", "<%a%>"),
  fc.string({ maxLength: 6 }),
);

describe("renderPrompt", () => {
  it("writes values without HTML escaping, non-strings as JSON, and nothing of Object.prototype", () => {
    expect(fill("{{a}} {{b}} {{c}} {{constructor}}{{toString}}{{__proto__}}", { a: "<&>", b: { x: [1] }, c: 2 })).toBe(
      '<&> {"x":[1]} 2 ',
    );
  });

  it("keeps each parse in the cache it was given, and renders without one", () => {
    const cache = new Map();
    const renderer = createTemplateRenderer(cache);
    expect(renderPrompt(renderer, "Hi {{name}}", { name: "Ada" })).toBe("Hi Ada");
    expect(renderPrompt(renderer, "Hi {{name}}", { name: "Bob" })).toBe("Hi Bob");
    expect([...cache.keys()]).toEqual(["Hi {{name}}"]);
    expect(renderPrompt(createTemplateRenderer(), "Hi {{name}}", { name: "Cy" })).toBe("Hi Cy");
  });
});

describe("partials", () => {
  // q includes p, p includes nothing: Mustache itself recurses without end on a cycle. Each ends
  // with a line end: a tag alone on its line renders as Mustache renders it then.
  const PARTIALS: Record<string, string> = { p: "P={{b}}\n  second line\n", q: "  Q {{> p}}\n{{#a}}[{{b}}]{{/a}}\n" };
  const lookup = (name: string) => PARTIALS[name];
  const withPartials = fc
    .array(fc.oneof(piece, fc.constantFrom("{{> p}}", "{{>q}}", "  {{> p}}\n", "\t{{> q}}\n", "{{> missing}}")), {
      maxLength: 30,
    })
    .map((parts) => parts.join(""));

  it("renders as Mustache renders them: indentation of standalone tags, nesting, missing ones empty", () => {
    const view = { a: [{ b: "B1" }, { b: "B2" }], b: "top", c: false };
    const renderer = createTemplateRenderer();
    fc.assert(
      fc.property(withPartials, (t) => {
        const ours = outcome(() => renderer.render(t, view, String, lookup));
        const theirs = outcome(() => new Mustache.Writer().render(t, view, PARTIALS, { escape: String }));
        expect(ours).toEqual(theirs);
      }),
      { numRuns: 3_000 },
    );
  });

  it("fills an included text with the including template's variables, names with / and @ included", () => {
    const partials: Record<string, string> = { "shared/tone": "Be {{tone}}.", "sign@staging": "- {{name}}" };
    const text = fill("Hi {{name}}. {{> shared/tone}}\n{{> sign@staging}}", { name: "Ada", tone: "kind" }, (n) =>
      Object.hasOwn(partials, n) ? partials[n] : undefined,
    );
    expect(text).toBe("Hi Ada. Be kind.\n- Ada");
    // No lookup, or a name it does not know: the tag renders nothing (never Object.prototype's).
    expect(fill("a{{> constructor}}b", {})).toBe("ab");
    expect(fill("a{{> constructor}}b", {}, () => undefined)).toBe("ab");
  });

  it("keeps the line end of a tag alone on its line when the included text has none", () => {
    const lookup = (n: string) => ({ safety: "Be safe.\nBe kind.", word: "w" })[n];
    expect(fill("You help.\n  {{> safety}}\nAnswer briefly.", {}, lookup)).toBe(
      "You help.\n  Be safe.\n  Be kind.\nAnswer briefly.",
    );
    expect(fill("A\r\n{{> word}}\r\nB", {}, lookup)).toBe("A\r\nw\r\nB");
    // Within a line, and as the last line, the text goes in as it is.
    expect(fill("say {{> word}} now\n{{> word}}", {}, lookup)).toBe("say w now\nw");
    expect(fill("{{#on}}\n{{> word}}\n{{/on}}", { on: true }, lookup)).toBe("w\n");
  });

  it("refuses partials nested deeper than the limit instead of overflowing the stack (a cycle)", () => {
    const cycle: Record<string, string> = { a: "A{{> b}}", b: "B{{> a}}" };
    const render = () => fill("{{> a}}", {}, (n) => cycle[n]);
    expect(render).toThrow(PartialDepthError);
    expect(render).toThrow(`nests partials deeper than ${MAX_PARTIAL_DEPTH}`);
    // Exactly the limit is rendered: five partials, each including the next.
    const chain: Record<string, string> = {
      p1: "1{{> p2}}",
      p2: "2{{> p3}}",
      p3: "3{{> p4}}",
      p4: "4{{> p5}}",
      p5: "5",
    };
    expect(fill("{{> p1}}", {}, (n) => chain[n])).toBe("12345");
    // The renderer is usable again after a refusal.
    expect(fill("ok {{x}}", { x: 1 })).toBe("ok 1");
  });
});
