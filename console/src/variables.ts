/**
 * A prompt's variables as the editor sees them: the names its Mustache template uses (parsed by
 * Mustache itself, as the platform renders it: docs/api.md "Prompts"), the variables schema those
 * names scaffold, and the template rendered with sample values.
 */
import Mustache from "mustache";

// Every keystroke is a new template: no cache of parsed templates.
Mustache.templateCache = undefined;

/** A name the template uses at its top level; a section or inverted section may stay unset. */
export interface Detected {
  name: string;
  optional: boolean;
}

type Token = [string, string, number, number, Token[]?];

/** The top-level variables of `templates` in order of appearance, or Mustache's message when one does not parse. */
export function detectVariables(templates: string[]): { variables: Detected[]; error?: string } {
  const found = new Map<string, Detected>();
  try {
    for (const template of templates) {
      for (const [type, value] of Mustache.parse(template) as Token[]) {
        const name = value.split(".")[0] ?? value;
        if (!["name", "&", "#", "^"].includes(type) || name === "" || found.has(name)) continue;
        found.set(name, { name, optional: type === "#" || type === "^" });
      }
    }
  } catch (e) {
    return { variables: [...found.values()], error: (e as Error).message };
  }
  return { variables: [...found.values()] };
}

export const VARIABLE_TYPES = ["string", "number", "integer", "boolean"] as const;
export type VariableType = (typeof VARIABLE_TYPES)[number];

/** One property of the variables schema, as the form edits it; `rest` keeps what the form does not show. */
export interface VariableSpec {
  name: string;
  type: VariableType | "other";
  required: boolean;
  description: string;
  rest: Record<string, unknown>;
}

export type Schema = Record<string, unknown>;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** What is wrong with a variables schema as typed, else the schema. */
export function parseSchema(text: string): { schema?: Schema; issue?: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return { issue: `is not JSON: ${(e as Error).message}` };
  }
  if (!isObject(value)) return { issue: "must be a JSON object" };
  if (value.type !== "object") return { issue: 'must be a schema of "type": "object"' };
  return { schema: value };
}

/** The schema's properties as form rows. */
export function specsOf(schema: Schema): VariableSpec[] {
  const properties = isObject(schema.properties) ? schema.properties : {};
  const required = Array.isArray(schema.required) ? schema.required : [];
  return Object.entries(properties).map(([name, property]) => {
    const { type, description, ...rest } = isObject(property) ? property : {};
    return {
      name,
      type: VARIABLE_TYPES.includes(type as VariableType) ? (type as VariableType) : "other",
      required: required.includes(name),
      description: typeof description === "string" ? description : "",
      rest: type !== undefined && !VARIABLE_TYPES.includes(type as VariableType) ? { type, ...rest } : rest,
    };
  });
}

/** A detected variable not yet declared: a string, required (not empty) unless it only opens a section. */
export const scaffoldSpec = ({ name, optional }: Detected): VariableSpec => ({
  name,
  type: "string",
  required: !optional,
  description: "",
  rest: {},
});

/** The schema with the rows in place of its properties; a required string refuses an empty value. */
export function schemaWith(schema: Schema, specs: VariableSpec[]): Schema {
  const properties: Record<string, unknown> = {};
  for (const s of specs) {
    const { minLength, ...rest } = s.rest;
    const property: Record<string, unknown> = s.type === "other" ? { ...rest } : { type: s.type, ...rest };
    if (s.description) property.description = s.description;
    if (s.type === "string" && s.required) property.minLength = typeof minLength === "number" ? minLength : 1;
    else if (minLength !== undefined && !(s.type === "string" && minLength === 1)) property.minLength = minLength;
    properties[s.name] = property;
  }
  return { ...schema, type: "object", properties, required: specs.filter((s) => s.required).map((s) => s.name) };
}

/** The schema's rows, then a scaffolded row for every detected variable it does not declare. */
export function effectiveSpecs(schema: Schema, detected: Detected[]): VariableSpec[] {
  const specs = specsOf(schema);
  const declared = new Set(specs.map((s) => s.name));
  return [...specs, ...detected.filter((d) => !declared.has(d.name)).map(scaffoldSpec)];
}

/** A sample value as the variable's type reads it (a number, a boolean), else the text. */
function sampleValue(spec: VariableSpec | undefined, text: string): unknown {
  if (spec?.type === "boolean") return text === "true";
  if ((spec?.type === "number" || spec?.type === "integer") && text.trim() !== "" && !Number.isNaN(Number(text)))
    return Number(text);
  return text;
}

/** A piece of the rendered preview: text, or a variable's value (its placeholder while it has no sample). */
export interface PreviewPart {
  text: string;
  variable: boolean;
}

const OPEN = "\u0001";
const CLOSE = "\u0002";
/** Stands for `{{> ` in a preview: a partial's text is read at run time, so the preview shows its tag. */
const PARTIAL = "\u0003";
const PARTIAL_TAG = /\{\{>\s*([^}]*?)\s*\}\}/g;

/** `template` rendered as the platform renders it (no HTML escaping), each variable's value marked. */
export function renderPreview(template: string, specs: VariableSpec[], samples: Record<string, string>): PreviewPart[] {
  const view: Record<string, unknown> = {};
  for (const spec of specs) {
    const text = samples[spec.name] ?? "";
    view[spec.name] = text === "" ? `{{${spec.name}}}` : sampleValue(spec, text);
  }
  let rendered: string;
  try {
    // A partial (docs/api.md "Partials") shows as its tag, marked, on its own line when it is on one:
    // its text is read at run time.
    const marked = template.replace(PARTIAL_TAG, (_tag, name: string) => `${OPEN}${PARTIAL}${name}${CLOSE}`);
    rendered = Mustache.render(marked, view, {}, { escape: (v: unknown) => `${OPEN}${String(v)}${CLOSE}` });
  } catch {
    return [{ text: template, variable: false }];
  }
  const parts: PreviewPart[] = [];
  for (const piece of rendered.split(OPEN)) {
    const [marked, after] = piece.includes(CLOSE) ? piece.split(CLOSE, 2) : [undefined, piece];
    if (marked !== undefined) {
      parts.push({ text: marked.startsWith(PARTIAL) ? `{{> ${marked.slice(1)}}}` : marked, variable: true });
    }
    if (after) parts.push({ text: after, variable: false });
  }
  return parts;
}
