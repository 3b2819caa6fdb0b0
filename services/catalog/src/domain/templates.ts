/**
 * Prompt templates: Mustache (`{{name}}`), rendered later without HTML escaping (api.md "Prompts").
 * Every placeholder must be declared by the version's variables schema, so a typo is a 400 at save
 * time rather than an empty string at run time. `{{> name}}` and `{{> name@label}}` include another
 * prompt (api.md "Partials", prompt-includes.ts): the tag's name is checked here, what it includes
 * when the version is created, published or labelled, and at run time.
 */

import { includeKey, includeOf, type PromptInclude } from "@kiln/contracts/partials";
import { parseTemplate, type TemplateToken } from "@kiln/contracts/template-parse";
import type { Issues } from "./issues.js";
import { isJsonObject, type JsonObject, type JsonValue, ownValue } from "./json-schema.js";
import { includeIssue } from "./prompt-includes.js";

export interface Placeholder {
  /** As written: `city`, `user.name`, `.` (the current item of a section), `header@staging` (a partial). */
  name: string;
  kind: "variable" | "section" | "inverted" | "partial";
  /** Names of the enclosing sections, outermost first. */
  sections: string[];
}

/**
 * Every name a template uses, sections included, in order of appearance. Throws (with Mustache's
 * message) when the template does not parse.
 */
export function placeholdersOf(template: string): Placeholder[] {
  const spans = parseTemplate(template);
  const found: Placeholder[] = [];
  const walk = (list: TemplateToken[], sections: string[]) => {
    for (const [type, value, , , children] of list) {
      if (type === "name" || type === "&") found.push({ name: value, kind: "variable", sections });
      else if (type === "#" || type === "^") {
        found.push({ name: value, kind: type === "#" ? "section" : "inverted", sections });
        walk(children ?? [], [...sections, value]);
      } else if (type === ">") found.push({ name: value, kind: "partial", sections });
    }
  };
  walk(spans, []);
  return found;
}

/** The schema of `name` (dotted) inside an object schema, when its `properties` declare it. */
function schemaAt(scope: JsonValue | undefined, name: string): JsonValue | undefined {
  let current = scope;
  for (const segment of name.split(".")) {
    const properties = isJsonObject(current) ? ownValue(current, "properties") : undefined;
    if (!isJsonObject(properties) || !Object.hasOwn(properties, segment)) return undefined;
    current = properties[segment];
  }
  return current;
}

/** What a section pushes as context: the item schema of an array, else the value's own schema. */
function sectionScope(schema: JsonValue | undefined): JsonValue | undefined {
  if (!isJsonObject(schema)) return undefined;
  const items = ownValue(schema, "items");
  return isJsonObject(items) ? items : schema;
}

/**
 * Checks a template against the variables schema. A name resolves as Mustache looks it up: its
 * first segment in the innermost section's item schema, then outwards up to the variables schema.
 */
export function checkTemplate(issues: Issues, field: string, template: string, variablesSchema: JsonObject): void {
  let placeholders: Placeholder[];
  try {
    placeholders = placeholdersOf(template);
  } catch (e) {
    issues.add(field, `is not a valid template: ${e instanceof Error ? e.message : String(e)}`);
    return;
  }
  // Scope schemas per section path, computed as sections are met (outer sections come first).
  const scopes = new Map<string, (JsonValue | undefined)[]>([["", [variablesSchema]]]);
  for (const p of placeholders) {
    const chain = scopes.get(p.sections.join("\u0000")) ?? [variablesSchema];
    if (p.name === ".") continue;
    if (p.kind === "partial") {
      const issue = includeIssue(p.name);
      if (issue) issues.add(field, `includes {{> ${p.name}}}: ${issue}`);
      continue;
    }
    const head = p.name.split(".")[0] ?? p.name;
    const owner = [...chain].reverse().find((scope) => schemaAt(scope, head) !== undefined);
    if (owner === undefined) {
      issues.add(field, `uses {{${p.name}}}, but variablesSchema declares no variable "${head}"`);
      continue;
    }
    if (p.kind !== "variable") {
      const inner = p.kind === "section" ? sectionScope(schemaAt(owner, p.name)) : undefined;
      scopes.set([...p.sections, p.name].join("\u0000"), inner === undefined ? chain : [...chain, inner]);
    }
  }
}

/**
 * The prompts the templates include (`{{> name}}`, `{{> name@label}}`), each once, in order of
 * appearance, with the field of its first tag. Templates that do not parse (or name no prompt) add
 * none: checkTemplate reports them.
 */
export function includesOf(templates: readonly { field: string; template: string }[]): (PromptInclude & {
  field: string;
})[] {
  const found = new Map<string, PromptInclude & { field: string }>();
  for (const { field, template } of templates) {
    let placeholders: Placeholder[];
    try {
      placeholders = placeholdersOf(template);
    } catch {
      continue;
    }
    for (const p of placeholders) {
      if (p.kind !== "partial" || includeIssue(p.name)) continue;
      const include = includeOf(p.name);
      if (!found.has(includeKey(include))) found.set(includeKey(include), { ...include, field });
    }
  }
  return [...found.values()];
}
