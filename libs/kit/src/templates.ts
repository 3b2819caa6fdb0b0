/**
 * Mustache templates (docs/api.md "Prompts"), parsed without Mustache's cost per character.
 *
 * Mustache's parser makes one token per character of text (to find standalone lines), then joins
 * them: about 150 bytes and 0.1–1 µs per character, so a 1,000,000-character prompt took 150 MB of
 * heap, and a 100,000-character one 15 MB and up to 100 ms of the event loop. Only the lines that
 * hold tags need that care, and on them only whether a stretch of text is blank. So the template is
 * handed to Mustache compacted (each stretch of text between tags and line ends becomes one
 * character: " " when blank, "x" otherwise), and the tokens Mustache answers are mapped back onto
 * the original: the same tree, the same positions, the same text, the same errors. A template that
 * changes its delimiters (`{{=<% %>=}}`) is parsed as it is. templates.test.ts holds the result
 * equal to Mustache's own on generated templates.
 */
import { LRUCache } from "lru-cache";
import Mustache from "mustache";

/** Mustache's tokens: [type, value, start, end, children?, sectionEnd?]. */
export type TemplateToken = [string, string, number, number, TemplateToken[]?, number?];

/** One piece of the compacted template: where it starts in each, and what it is. */
interface Piece {
  at: number;
  from: number;
  /** text: collapsed to one character; newline and tag: kept as they are. */
  kind: "text" | "newline" | "tag";
}

interface Compacted {
  text: string;
  pieces: Piece[];
  originalLength: number;
}

/** \s as Mustache tests it (`/\S/` fails), minus the line end that the parser treats on its own. */
const BLANK = /^[^\S\n]*$/;

/**
 * The template with every stretch of text collapsed, or null when it sets delimiters (then only
 * Mustache's own parse is right). Tags are found as Mustache's scanner finds them with `{{ }}`.
 */
function compact(template: string): Compacted | null {
  const out: string[] = [];
  const pieces: Piece[] = [];
  let length = 0;
  const keep = (from: number, to: number, kind: "newline" | "tag") => {
    if (to <= from) return;
    pieces.push({ at: length, from, kind });
    out.push(template.slice(from, to));
    length += to - from;
  };
  const collapse = (from: number, to: number) => {
    // Line ends stay: they close a line for the standalone rule.
    let start = from;
    while (start < to) {
      const newline = template.indexOf("\n", start);
      const end = newline === -1 || newline >= to ? to : newline;
      if (end > start) {
        pieces.push({ at: length, from: start, kind: "text" });
        out.push(BLANK.test(template.slice(start, end)) ? " " : "x");
        length += 1;
      }
      if (end < to) keep(end, end + 1, "newline");
      start = end + 1;
    }
  };
  let pos = 0;
  while (pos < template.length) {
    const open = template.indexOf("{{", pos);
    if (open === -1) {
      collapse(pos, template.length);
      break;
    }
    collapse(pos, open);
    let p = open + 2;
    while (p < template.length && /\s/.test(template[p] ?? "")) p++;
    const type = template[p];
    if (type === "=") return null;
    const close = type === "{" ? template.indexOf("}}}", p + 1) : template.indexOf("}}", p);
    if (close === -1) {
      // Unclosed: Mustache reports it at the end, which maps back to the end.
      keep(open, template.length, "tag");
      break;
    }
    const end = close + (type === "{" ? 3 : 2);
    keep(open, end, "tag");
    pos = end;
  }
  return { text: out.join(""), pieces, originalLength: template.length };
}

/** A position in the compacted template → the same position in the original. */
function originalPosition(c: Compacted, at: number): number {
  if (at >= c.text.length) return c.originalLength;
  let lo = 0;
  let hi = c.pieces.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((c.pieces[mid] as Piece).at <= at) lo = mid;
    else hi = mid - 1;
  }
  const piece = c.pieces[lo] as Piece;
  return piece.kind === "text" ? piece.from : piece.from + (at - piece.at);
}

/**
 * The indentation Mustache gives a partial: the text before it on its line (a line ends at a line
 * end in text, not inside a tag), each blank kept and every other character a space.
 */
function indentationBefore(c: Compacted, template: string, start: number): string {
  let indentation = "";
  c.pieces.forEach((piece, i) => {
    if (piece.from >= start) return;
    if (piece.kind === "newline") indentation = "";
    if (piece.kind !== "text") return;
    const end = c.pieces[i + 1]?.from ?? c.originalLength;
    // Per UTF-16 unit, as Mustache counts.
    for (let at = piece.from; at < end; at++) {
      const unit = template.charAt(at);
      indentation += /\S/.test(unit) ? " " : unit;
    }
  });
  return indentation;
}

function mapTokens(tokens: TemplateToken[], c: Compacted, template: string): void {
  for (const token of tokens) {
    token[2] = originalPosition(c, token[2]);
    token[3] = originalPosition(c, token[3]);
    if (token[0] === "text") token[1] = template.slice(token[2], token[3]);
    else if (token[0] === "#" || token[0] === "^") {
      mapTokens(token[4] ?? [], c, template);
      if (typeof token[5] === "number") token[5] = originalPosition(c, token[5]);
    } else if (token[0] === ">") {
      (token as unknown[])[4] = indentationBefore(c, template, token[2]);
    }
  }
}

/**
 * Mustache's parse of `template` (its tokens, or its error with the position in `template`), at a
 * cost per tag and line rather than per character.
 */
export function parseTemplate(template: string): TemplateToken[] {
  const c = compact(template);
  // A writer of its own each time: the default one caches every template it ever parsed.
  if (c === null) return new Mustache.Writer().parse(template) as unknown as TemplateToken[];
  let tokens: TemplateToken[];
  try {
    tokens = new Mustache.Writer().parse(c.text) as unknown as TemplateToken[];
  } catch (e) {
    if (e instanceof Error) {
      e.message = e.message.replace(/ at (\d+)$/, (_m, at: string) => ` at ${originalPosition(c, Number(at))}`);
    }
    throw e;
  }
  mapTokens(tokens, c, template);
  return tokens;
}

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

/**
 * Renders templates, keeping the parse of the recent ones (bounded by their total length, so that
 * long prompts cannot grow the cache past `maxChars`; Mustache's default cache keeps every
 * template forever). A partial is parsed by the same cache and indented as Mustache indents it
 * (a tag alone on its line keeps its line end: markLineEnds); partials nest at most
 * MAX_PARTIAL_DEPTH deep.
 */
export function templateRenderer({ maxChars = 4_000_000 }: { maxChars?: number } = {}): TemplateRenderer {
  const parsed = new LRUCache<string, TemplateToken[]>({
    maxSize: maxChars,
    sizeCalculation: (_tokens, template) => Math.max(1, template.length),
  });
  const tokensOf = (template: string) => {
    let tokens = parsed.get(template);
    if (!tokens) {
      tokens = parseTemplate(template);
      markLineEnds(tokens, template);
      if (template.length <= maxChars) parsed.set(template, tokens);
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

/** The parse of recent prompt templates, bounded. */
const promptTemplates = templateRenderer();
const asText = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v));

/**
 * A prompt template filled with its variables: Mustache without HTML escaping (docs/api.md
 * "Prompts"); non-string values render as JSON. `partials` gives the text each `{{> name}}`
 * includes (api.md "Partials"), rendered with the same variables. Runs and the MCP server's
 * prompts render with it.
 */
export function renderPromptTemplate(
  template: string,
  variables: Record<string, unknown>,
  partials?: PartialLookup,
): string {
  return promptTemplates.render(template, viewOf(variables), asText, partials);
}
