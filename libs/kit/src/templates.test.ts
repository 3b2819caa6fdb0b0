import fc from "fast-check";
import Mustache from "mustache";
import { describe, expect, it } from "vitest";
import {
  MAX_PARTIAL_DEPTH,
  PartialDepthError,
  parseTemplate,
  renderPromptTemplate,
  templateRenderer,
} from "./templates.js";

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
    const renderer = templateRenderer();
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

describe("templateRenderer", () => {
  it("keeps the parse of recent templates within its bound", () => {
    const renderer = templateRenderer({ maxChars: 100 });
    expect(renderer.render("Hi {{name}}", { name: "Ada" }, String)).toBe("Hi Ada");
    expect(renderer.render("Hi {{name}}", { name: "Bob" }, String)).toBe("Hi Bob");
    // Longer than the bound: rendered, not kept.
    expect(renderer.render(`${"z".repeat(200)}{{name}}`, { name: "!" }, String)).toBe(`${"z".repeat(200)}!`);
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
    const renderer = templateRenderer();
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
    const text = renderPromptTemplate(
      "Hi {{name}}. {{> shared/tone}}\n{{> sign@staging}}",
      { name: "Ada", tone: "kind" },
      (n) => (Object.hasOwn(partials, n) ? partials[n] : undefined),
    );
    expect(text).toBe("Hi Ada. Be kind.\n- Ada");
    // No lookup, or a name it does not know: the tag renders nothing (never Object.prototype's).
    expect(renderPromptTemplate("a{{> constructor}}b", {})).toBe("ab");
    expect(renderPromptTemplate("a{{> constructor}}b", {}, () => undefined)).toBe("ab");
  });

  it("keeps the line end of a tag alone on its line when the included text has none", () => {
    const lookup = (n: string) => ({ safety: "Be safe.\nBe kind.", word: "w" })[n];
    expect(renderPromptTemplate("You help.\n  {{> safety}}\nAnswer briefly.", {}, lookup)).toBe(
      "You help.\n  Be safe.\n  Be kind.\nAnswer briefly.",
    );
    expect(renderPromptTemplate("A\r\n{{> word}}\r\nB", {}, lookup)).toBe("A\r\nw\r\nB");
    // Within a line, and as the last line, the text goes in as it is.
    expect(renderPromptTemplate("say {{> word}} now\n{{> word}}", {}, lookup)).toBe("say w now\nw");
    expect(renderPromptTemplate("{{#on}}\n{{> word}}\n{{/on}}", { on: true }, lookup)).toBe("w\n");
  });

  it("refuses partials nested deeper than the limit instead of overflowing the stack (a cycle)", () => {
    const cycle: Record<string, string> = { a: "A{{> b}}", b: "B{{> a}}" };
    const render = () => renderPromptTemplate("{{> a}}", {}, (n) => cycle[n]);
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
    expect(renderPromptTemplate("{{> p1}}", {}, (n) => chain[n])).toBe("12345");
    // The renderer is usable again after a refusal.
    expect(renderPromptTemplate("ok {{x}}", { x: 1 })).toBe("ok 1");
  });
});
