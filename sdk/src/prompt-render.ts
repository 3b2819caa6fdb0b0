/**
 * Rendering a prompt version as the platform renders it for a run: the variables checked against
 * the version's JSON Schema with ajv (2020-12, strict mode off, every error, formats: as the
 * services build it), then the template's messages (system and developer prompts for a text version) filled by Mustache without HTML
 * escaping, a non-string value written as JSON, `{{> name}}` replaced with the included prompt's
 * text as resolved with the version (api.md "Partials"). Loaded on the first `prompts.resolve`, so that
 * importing the SDK does not load ajv.
 */
import { fieldIssuesOf } from "@kiln/contracts/field-issues";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import ajvFormats from "ajv-formats";
import Mustache from "mustache";
import { type ErrorDetail, KilnError } from "./kiln-error.js";

// ajv-formats is CommonJS: its plugin is both `module.exports` and `.default`; the types know `.default`.
const addFormats = ajvFormats.default;

/** Mustache's tokens, as its Writer's renderTokens takes them. */
type Tokens = string[][];

/** A template parsed once (on a writer of its own: the shared one caches every template forever). */
function parse(template: string): Tokens {
  const tokens = new Mustache.Writer().parse(template);
  markLineEnds(tokens as unknown as unknown[][], template);
  return tokens;
}

/**
 * Marks each partial tag alone on its line with that line end (its eighth field), as the platform
 * renders it: Mustache drops the line of such a tag, and an included prompt's text seldom ends with
 * a line end of its own, so rendering adds it back when the text has none.
 */
function markLineEnds(tokens: unknown[][], template: string): void {
  for (const token of tokens) {
    if (token[0] === "#" || token[0] === "^") markLineEnds((token[4] as unknown[][] | undefined) ?? [], template);
    if (token[0] !== ">") continue;
    const [start, end] = [token[2] as number, token[3] as number];
    const lineStart = template.lastIndexOf("\n", start - 1) + 1;
    const newline = template.indexOf("\n", end);
    if (newline === -1) continue;
    const alone = /^[ \t]*$/.test(template.slice(lineStart, start)) && /^[ \t]*\r?$/.test(template.slice(end, newline));
    if (alone) token[7] = template[newline - 1] === "\r" ? "\r\n" : "\n";
  }
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

/** Partials nest at most this deep, as the platform bounds them (api.md "Partials"). */
const MAX_PARTIAL_DEPTH = 5;
let depth = 0;
// A partial is parsed on a writer of its own (the default parse caches every template forever),
// and nesting is bounded: deeper is an error, never a stack overflow.
writer.renderPartial = function renderPartial(token, context, partials, config) {
  if (typeof partials !== "function") return "";
  const [, name, , , indentation, tagIndex, lineHasNonSpace, lineEnd] = token as unknown as [
    string,
    string,
    number,
    number,
    string,
    number,
    boolean,
    string?,
  ];
  const value = partials(name);
  if (value === undefined || value === null) return "";
  if (depth >= MAX_PARTIAL_DEPTH)
    throw new Error(`Kiln: the partial {{> ${name}}} nests deeper than ${MAX_PARTIAL_DEPTH}`);
  const own = tagIndex === 0 && indentation ? this.indentPartial(value, indentation, lineHasNonSpace) : value;
  const indented = lineEnd && !value.endsWith("\n") ? own + lineEnd : own;
  depth++;
  try {
    return this.renderTokens(parse(indented), context, partials, indented, config as Mustache.RenderOptions);
  } finally {
    depth--;
  }
};

/** What a tag `{{> name}}` or `{{> name@label}}` is replaced with, by name and label. */
type PartialLookup = (reference: string) => string | undefined;

function fill(template: string, tokens: Tokens, view: unknown, partials: PartialLookup | undefined): string {
  return writer.renderTokens(tokens, new Mustache.Context(view), partials, template, { escape: asText });
}

/** A prompt a version includes, as `GET /api/prompts/:id?partials=true` answers it. */
export interface IncludedPartial {
  name: string;
  label: string;
  template: string;
}

/** `name` (production) or `name@label`: the last `@` separates the label, as the platform reads it. */
function keyOf(reference: string): string {
  const at = reference.lastIndexOf("@");
  return at <= 0 ? `production\u0000${reference}` : `${reference.slice(at + 1)}\u0000${reference.slice(0, at)}`;
}

function partialLookupOf(partials: readonly IncludedPartial[] | undefined): PartialLookup | undefined {
  if (!partials || partials.length === 0) return undefined;
  const texts = new Map(partials.map((p) => [`${p.label}\u0000${p.name}`, p.template]));
  return (reference) => texts.get(keyOf(reference));
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
  /** What its `{{> name}}` tags include, as resolved with the version (api.md "Partials"). */
  partials?: readonly IncludedPartial[];
  /** An include that did not resolve: rendering throws, as a run of the version fails. */
  unresolvedPartial?: { reference: string; message: string };
}): TemplateFiller {
  const partials = partialLookupOf(content.partials);
  const unresolved = content.unresolvedPartial;
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
        throw invalid(fieldIssuesOf(validate.errors ?? [], "variables", variables));
      }
      if (unresolved) {
        // A state conflict (api.md "Conventions"), as the SDK answers when it cannot render.
        throw new KilnError(
          409,
          "failed_precondition",
          unresolved.message,
          [{ field: "partials", issue: `{{> ${unresolved.reference}}} does not resolve` }],
          undefined,
          undefined,
        );
      }
      const view = viewOf(variables);
      return template.map(({ m, tokens }) =>
        m.role === "placeholder" || tokens === null
          ? m
          : { role: m.role, content: fill(m.content, tokens, view, partials) },
      );
    },
  };
}
