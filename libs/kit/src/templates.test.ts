import { describe, expect, it } from "vitest";
import { renderPromptTemplate, templateRenderer } from "./templates.js";

describe("templateRenderer", () => {
  it("keeps the parse of recent templates within its bound", () => {
    const renderer = templateRenderer({ maxChars: 100 });
    expect(renderer.render("Hi {{name}}", { name: "Ada" }, String)).toBe("Hi Ada");
    expect(renderer.render("Hi {{name}}", { name: "Bob" }, String)).toBe("Hi Bob");
    // Longer than the bound: rendered, not kept.
    expect(renderer.render(`${"z".repeat(200)}{{name}}`, { name: "!" }, String)).toBe(`${"z".repeat(200)}!`);
  });
});

describe("renderPromptTemplate", () => {
  it("fills a prompt template as contracts' renderer does, partials included", () => {
    const lookup = (n: string) => ({ tone: "Be {{tone}}." })[n];
    expect(
      renderPromptTemplate("Hi {{name}} {{meta}}. {{> tone}}", { name: "Ada", meta: { a: 1 }, tone: "kind" }, lookup),
    ).toBe('Hi Ada {"a":1}. Be kind.');
  });
});
