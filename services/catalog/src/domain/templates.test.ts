import { DomainError } from "@kiln/kit/errors";
import { describe, expect, it } from "vitest";
import { Issues } from "./issues.js";
import type { JsonObject } from "./json-schema.js";
import { checkTemplate, includesOf, placeholdersOf } from "./templates.js";

function templateIssues(template: string, schema: JsonObject, field = "systemPrompt") {
  const issues = new Issues();
  checkTemplate(issues, field, template, schema);
  try {
    issues.throwIfAny();
    return [];
  } catch (e) {
    if (!(e instanceof DomainError)) throw e;
    return e.details;
  }
}

const schema: JsonObject = {
  type: "object",
  properties: {
    city: { type: "string" },
    user: { type: "object", properties: { name: { type: "string" } } },
    items: { type: "array", items: { type: "object", properties: { title: { type: "string" } } } },
    urgent: { type: "boolean" },
  },
};

describe("placeholdersOf", () => {
  it("collects variables, triple mustaches, sections and inverted sections with their nesting", () => {
    expect(
      placeholdersOf("Hi {{city}} {{{user.name}}} {{#items}}{{title}}{{/items}}{{^urgent}}calm{{/urgent}}{{! note}}"),
    ).toEqual([
      { name: "city", kind: "variable", sections: [] },
      { name: "user.name", kind: "variable", sections: [] },
      { name: "items", kind: "section", sections: [] },
      { name: "title", kind: "variable", sections: ["items"] },
      { name: "urgent", kind: "inverted", sections: [] },
    ]);
  });

  it("throws on an unclosed section or tag", () => {
    expect(() => placeholdersOf("{{#items}} no end")).toThrow(/Unclosed section/);
    expect(() => placeholdersOf("{{city")).toThrow(/Unclosed tag/);
  });
});

describe("checkTemplate", () => {
  it("accepts declared variables, dotted names, sections and items of a section", () => {
    expect(
      templateIssues(
        "{{city}} {{user.name}} {{#items}}- {{title}} in {{city}}{{/items}} {{^urgent}}ok{{/urgent}}",
        schema,
      ),
    ).toEqual([]);
  });

  it("accepts a template with no placeholders against the default schema", () => {
    expect(templateIssues("Be brief.", { type: "object" })).toEqual([]);
  });

  it("refuses an undeclared placeholder and names it", () => {
    expect(templateIssues("Weather in {{town}}", schema, "developerPrompt")).toEqual([
      { field: "developerPrompt", issue: 'uses {{town}}, but variablesSchema declares no variable "town"' },
    ]);
  });

  it("checks the top-level name of a dotted placeholder and section names", () => {
    expect(templateIssues("{{account.id}} {{#rows}}x{{/rows}}", schema).map((d) => d.issue)).toEqual([
      'uses {{account.id}}, but variablesSchema declares no variable "account"',
      'uses {{rows}}, but variablesSchema declares no variable "rows"',
    ]);
  });

  it("refuses a name inside a section that neither the items nor the variables declare", () => {
    expect(templateIssues("{{#items}}{{price}}{{/items}}", schema)).toEqual([
      { field: "systemPrompt", issue: 'uses {{price}}, but variablesSchema declares no variable "price"' },
    ]);
  });

  it("refuses unparsable templates", () => {
    expect(templateIssues("{{#city}}", schema)[0]?.issue).toMatch(/^is not a valid template: Unclosed section "city"/);
  });

  it('takes partials naming a prompt and a label, and refuses those that cannot (api.md "Partials")', () => {
    expect(templateIssues("{{> header}} {{> team/footer@staging}} {{#city}}{{> row}}{{/city}}", schema)).toEqual([]);
    expect(templateIssues("{{> header@Bad}}", schema)).toEqual([
      { field: "systemPrompt", issue: 'includes {{> header@Bad}}: the label "Bad" must match ^[a-z][a-z0-9-]{0,39}$' },
    ]);
    expect(templateIssues("{{> header@draft}}", schema)[0]?.issue).toMatch(/"draft" is reserved/);
  });
});

describe("includesOf", () => {
  it("lists each included prompt once, in order, with the field of its first tag", () => {
    expect(
      includesOf([
        { field: "systemPrompt", template: "{{> a}} {{> b@staging}} {{> a@production}}" },
        { field: "developerPrompt", template: "{{#x}}{{> c}}{{/x}} {{> b@staging}} {{> bad@X}}" },
        { field: "messages[1].content", template: "{{> broken}} {{#unclosed}}" },
        { field: "messages[2].content", template: "{{> d/e@latest}}" },
      ]),
    ).toEqual([
      { name: "a", label: "production", field: "systemPrompt" },
      { name: "b", label: "staging", field: "systemPrompt" },
      { name: "c", label: "production", field: "developerPrompt" },
      { name: "d/e", label: "latest", field: "messages[2].content" },
    ]);
  });
});
