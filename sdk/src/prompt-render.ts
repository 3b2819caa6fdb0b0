/**
 * Rendering a prompt version as the platform renders it for a run: the variables checked against
 * the version's JSON Schema with ajv (2020-12, strict mode off, every error, formats: as the
 * services build it), then the template's messages (system and developer prompts for a text version) filled by Mustache without HTML
 * escaping, a non-string value written as JSON. Loaded on the first `prompts.resolve`, so that
 * importing the SDK does not load ajv.
 */
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import ajvFormats from "ajv-formats";
import Mustache from "mustache";
import { type ErrorDetail, KilnError } from "./kiln-error.js";

// ajv-formats is CommonJS: its plugin is both `module.exports` and `.default`; the types know `.default`.
const addFormats = ajvFormats.default;

/** Mustache's tokens, as its Writer's renderTokens takes them. */
type Tokens = string[][];

/** A template parsed once (on a writer of its own: the shared one caches every template forever). */
function parse(template: string): Tokens {
  return new Mustache.Writer().parse(template);
}

/**
 * The variables as Mustache's view: objects without a prototype, so that a placeholder naming an
 * absent variable such as `{{constructor}}` renders nothing instead of what Object.prototype holds.
 */
function viewOf(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(viewOf);
  if (value === null || typeof value !== "object") return value;
  const view = Object.create(null) as Record<string, unknown>;
  for (const [key, item] of Object.entries(value)) {
    Object.defineProperty(view, key, { value: viewOf(item), enumerable: true, writable: true, configurable: true });
  }
  return view;
}

const asText = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v));
const writer = new Mustache.Writer();

function fill(template: string, tokens: Tokens, view: unknown): string {
  return writer.renderTokens(tokens, new Mustache.Context(view), undefined, template, { escape: asText });
}

/** `/items/0/city` under `variables` → `variables.items[0].city`. */
function fieldOfPointer(pointer: string): string {
  let field = "variables";
  if (pointer === "") return field;
  for (const raw of pointer.slice(1).split("/")) {
    const segment = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    field += /^(0|[1-9]\d*)$/.test(segment) ? `[${segment}]` : `.${segment}`;
  }
  return field;
}

/** One ajv error as the platform names it in an error's details. */
function issueOf(error: ErrorObject): ErrorDetail {
  const field = fieldOfPointer(error.instancePath);
  const params = error.params as { missingProperty?: string; allowedValues?: unknown[]; additionalProperty?: string };
  if (error.keyword === "required" && params.missingProperty !== undefined) {
    return { field: `${field}.${params.missingProperty}`, issue: "is required" };
  }
  if (error.keyword === "additionalProperties" && params.additionalProperty !== undefined) {
    return { field: `${field}.${params.additionalProperty}`, issue: "is not allowed" };
  }
  if (error.keyword === "enum" && Array.isArray(params.allowedValues)) {
    return { field, issue: `must be one of ${params.allowedValues.map((v) => JSON.stringify(v)).join(", ")}` };
  }
  return { field, issue: error.message ?? "is invalid" };
}

const invalid = (details: ErrorDetail[]) =>
  new KilnError(
    400,
    "invalid_argument",
    "the variables do not match the version's variables schema",
    details,
    undefined,
    undefined,
  );

/** A version's template message: a text (Mustache) or a placeholder for a conversation. */
export type TemplateMessage =
  | { role: "system" | "developer" | "user" | "assistant"; content: string }
  | { role: "placeholder"; name: string };

/** Fills a version's templates: `render` throws KilnError 400 (as a run would) on bad variables. */
export interface TemplateFiller {
  /** The template's messages in order, text filled, placeholders left for the caller's messages. */
  render(variables: unknown): TemplateMessage[];
}

/** The messages a version's template is: its own, else its system and developer prompts. */
export function templateOf(content: {
  systemPrompt: string;
  developerPrompt: string | null;
  messages?: TemplateMessage[];
}): TemplateMessage[] {
  if (content.messages && content.messages.length > 0) return content.messages;
  const built: TemplateMessage[] = [{ role: "system", content: content.systemPrompt }];
  if (content.developerPrompt) built.push({ role: "developer", content: content.developerPrompt });
  return built;
}

/** The filler of one version's templates and schema: parsed and compiled once. */
export function compileTemplates(content: {
  systemPrompt: string;
  developerPrompt: string | null;
  messages?: TemplateMessage[];
  variablesSchema: Record<string, unknown>;
}): TemplateFiller {
  const template = templateOf(content).map((m) => ({ m, tokens: m.role === "placeholder" ? null : parse(m.content) }));
  // An instance per schema: schemas of different prompts may declare the same `$id`.
  const ajv = new Ajv2020({ strict: false, allErrors: true, logger: false, validateSchema: false });
  addFormats(ajv);
  const validate: ValidateFunction = ajv.compile(content.variablesSchema);
  return {
    render(variables) {
      if (typeof variables !== "object" || variables === null || Array.isArray(variables)) {
        throw invalid([{ field: "variables", issue: "must be an object" }]);
      }
      if (!validate(variables)) {
        const seen = new Set<string>();
        const details: ErrorDetail[] = [];
        for (const issue of (validate.errors ?? []).map(issueOf)) {
          const key = `${issue.field}\n${issue.issue}`;
          if (!seen.has(key)) details.push(issue);
          seen.add(key);
        }
        throw invalid(details);
      }
      const view = viewOf(variables);
      return template.map(({ m, tokens }) =>
        m.role === "placeholder" || tokens === null ? m : { role: m.role, content: fill(m.content, tokens, view) },
      );
    },
  };
}
