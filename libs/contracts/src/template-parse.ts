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
 * changes its delimiters (`{{=<% %>=}}`) is parsed as it is. template-parse.test.ts holds the result
 * equal to Mustache's own on generated templates. The services and the SDK parse with it
 * (prompt-template.ts).
 */
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
