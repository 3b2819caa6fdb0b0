import fc from "fast-check";
import Mustache from "mustache";
import { describe, expect, it } from "vitest";
import { createTemplateRenderer } from "./prompt-template.js";
import { parseTemplate } from "./template-parse.js";

/** Mustache's own parse, on a writer of its own (no cache): what parseTemplate must equal. */
const mustacheParse = (template: string) => new Mustache.Writer().parse(template);
const outcome = (parse: () => unknown) => {
  try {
    return { tokens: parse() };
  } catch (e) {
    return { error: e instanceof Error ? e.message : String(e) };
  }
};

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
const template = fc.array(piece, { maxLength: 30 }).map((parts) => parts.join(""));

describe("parseTemplate", () => {
  it("answers Mustache's own tokens and errors, positions included, on generated templates", () => {
    fc.assert(
      fc.property(template, (t) => {
        expect(outcome(() => parseTemplate(t))).toEqual(outcome(() => mustacheParse(t)));
      }),
      { numRuns: 5_000 },
    );
  });

  it("renders as Mustache renders, standalone lines included", () => {
    const view = { a: [{ b: "B1" }, { b: "B2" }], b: "top", c: false };
    const renderer = createTemplateRenderer();
    fc.assert(
      fc.property(template, (t) => {
        const ours = outcome(() => renderer.render(t, view, String));
        const theirs = outcome(() => new Mustache.Writer().render(t, view, {}, { escape: String }));
        expect(ours).toEqual(theirs);
      }),
      { numRuns: 3_000 },
    );
  });

  it("parses a long prompt in tokens per tag and line, not per character", () => {
    const long = `${"You are a careful assistant. ".repeat(3_000)}\n{{#items}}\n  - {{name}}\n{{/items}}\n${"x".repeat(100_000)}`;
    const tokens = parseTemplate(long);
    expect(tokens).toEqual(mustacheParse(long));
    // Text, the section (its children: text, name, text) and text: Mustache joins each stretch.
    expect(tokens.map((t) => t[0])).toEqual(["text", "#", "text"]);
  });

  it("reports where a broken tag is, in the original template", () => {
    const broken = `${"x ".repeat(50_000)}{{#a}}`;
    expect(() => parseTemplate(broken)).toThrow(`Unclosed section "a" at ${broken.length}`);
    expect(() => parseTemplate(`${"y".repeat(1_000)}{{b`)).toThrow("Unclosed tag at 1003");
  });
});
