/**
 * Prompt templates rendered as a run renders them (docs/api.md "Prompts", "Partials"): the one
 * renderer of the services (through kit's bounded cache, libs/kit/src/templates.ts) and of the
 * SDK's `render` (which compiles it in), so a template renders the same on both sides. Templates
 * are parsed by parseTemplate (template-parse.ts); the variables are checked beforehand against the
 * version's schema with RE2 for its patterns (schema-ajv.ts). Nothing here runs a regular
 * expression a tenant wrote: tags, sections and partial names are matched literally.
 */
import Mustache from "mustache";
import { parseTemplate, type TemplateToken } from "./template-parse.js";

/**
 * What a `{{> name}}` tag includes: the template the tag's name (as written, `name` or
 * `name@label`) stands for, or undefined (the tag then renders nothing).
 */
export type PartialLookup = (name: string) => string | undefined;

/** Partials nested in partials at most this deep: deeper is a PartialDepthError, never a stack overflow. */
export const MAX_PARTIAL_DEPTH = 5;

/** A template whose partials include partials past MAX_PARTIAL_DEPTH (a cycle among them, say). */
export class PartialDepthError extends Error {
  constructor(readonly partial: string) {
    super(`the partial {{> ${partial}}} nests partials deeper than ${MAX_PARTIAL_DEPTH}`);
    this.name = "PartialDepthError";
  }
}

export interface TemplateRenderer {
  /** Renders `template` with `view`; `format` writes each `{{name}}` value; `partials` fills `{{> name}}`. */
  render(template: string, view: unknown, format: (value: unknown) => string, partials?: PartialLookup): string;
}

/**
 * Mustache's partial token: [">", name, start, end, indentation, tagIndex, lineHasNonSpace], and
 * ours after it: the line end a tag alone on its line keeps (markLineEnds).
 */
type PartialToken = [string, string, number, number, string, number, boolean, string?];

/**
 * Marks each partial tag alone on its line (blanks around it, a line end after it) with that line
 * end. Mustache drops the line of such a tag, its line end included, and expects the partial to
 * end with one; an included prompt's text seldom does, so without it the next line would follow
 * the included text on its last line. Rendering adds the line end back when the text has none.
 */
function markLineEnds(tokens: TemplateToken[], template: string): void {
  for (const token of tokens) {
    if (token[0] === "#" || token[0] === "^") markLineEnds(token[4] ?? [], template);
    if (token[0] !== ">") continue;
    const lineStart = template.lastIndexOf("\n", token[2] - 1) + 1;
    const newline = template.indexOf("\n", token[3]);
    if (newline === -1) continue;
    const alone =
      /^[ \t]*$/.test(template.slice(lineStart, token[2])) && /^[ \t]*\r?$/.test(template.slice(token[3], newline));
    if (alone) (token as unknown as PartialToken)[7] = template[newline - 1] === "\r" ? "\r\n" : "\n";
  }
}

/** Where a renderer keeps the parse of templates it rendered (a bounded cache in the services). */
export interface TemplateCache {
  get(template: string): TemplateToken[] | undefined;
  set(template: string, tokens: TemplateToken[]): void;
}

/**
 * Renders templates, keeping their parse in `cache` (none: each render parses). A partial is
 * parsed through the same cache and indented as Mustache indents it (a tag alone on its line keeps
 * its line end: markLineEnds); partials nest at most MAX_PARTIAL_DEPTH deep.
 */
export function createTemplateRenderer(cache?: TemplateCache): TemplateRenderer {
  const tokensOf = (template: string) => {
    let tokens = cache?.get(template);
    if (!tokens) {
      tokens = parseTemplate(template);
      markLineEnds(tokens, template);
      cache?.set(template, tokens);
    }
    return tokens as unknown as string[][];
  };
  const writer = new Mustache.Writer();
  // Rendering is synchronous: one depth counter serves every render of this writer.
  let depth = 0;
  writer.renderPartial = function renderPartial(token, context, partials, config) {
    if (typeof partials !== "function") return "";
    const [, name, , , indentation, tagIndex, lineHasNonSpace, lineEnd] = token as unknown as PartialToken;
    const value = partials(name);
    if (value === undefined || value === null) return "";
    if (depth >= MAX_PARTIAL_DEPTH) throw new PartialDepthError(name);
    const own = tagIndex === 0 && indentation ? this.indentPartial(value, indentation, lineHasNonSpace) : value;
    const indented = lineEnd && !value.endsWith("\n") ? own + lineEnd : own;
    depth++;
    try {
      return this.renderTokens(
        tokensOf(indented),
        context,
        partials,
        indented,
        config as Mustache.RenderOptions | undefined,
      );
    } finally {
      depth--;
    }
  };
  return {
    render(template, view, format, partials) {
      return writer.renderTokens(tokensOf(template), new Mustache.Context(view), partials, template, {
        escape: format,
      });
    },
  };
}

/**
 * The variables as Mustache's view: objects without a prototype, so that a placeholder naming an
 * absent variable such as `{{constructor}}`, `{{toString}}` or `{{__proto__}}` renders nothing
 * instead of what Object.prototype holds (Mustache looks names up with `in` and calls functions).
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

/** A variable's value as `{{name}}` writes it: a string as it is, anything else as JSON. */
const formatValue = (v: unknown): string => (typeof v === "string" ? v : JSON.stringify(v));

/**
 * A prompt template filled with its variables, as a run fills it: Mustache without HTML escaping
 * (docs/api.md "Prompts"); non-string values render as JSON. `partials` gives the text each
 * `{{> name}}` includes (api.md "Partials"), rendered with the same variables.
 */
export function renderPrompt(
  renderer: TemplateRenderer,
  template: string,
  variables: Record<string, unknown>,
  partials?: PartialLookup,
): string {
  return renderer.render(template, viewOf(variables), formatValue, partials);
}
