/**
 * promptfoo's templates are Nunjucks, Kiln's Mustache (without HTML escaping; a non-text value
 * renders as JSON). A `{{ name }}` tag is the same in both; so is a filter whose effect Kiln has
 * already (`safe`, `dump`, `tojson`). `trim` is dropped (reported). Any other expression or filter
 * (`{{ (style_config | load).tone }}`, `{{ name | upper }}`) is left intact as text, reported: the
 * model sees it as it is written, and it never becomes a variable.
 */

/** Filters whose effect Kiln's rendering has already. */
const SAME = new Set(["safe", "dump", "tojson"]);

/** A Mustache name: a top-level variable and its fields (`item.label`). */
const NAME = /^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*$/;

/** Mustache's own tags (sections, partials, comments, unescaped, delimiters), left as they are. */
const MUSTACHE_TAG = /^[#^/!>&={]/;

/** `text` as Mustache prints it: set-delimiter tags around it (a text holding both `<%` and `%>` stays as is). */
function literal(text: string): string {
  for (const [open, close] of [
    ["<%", "%>"],
    ["[[", "]]"],
    ["<<", ">>"],
  ] as const) {
    if (!text.includes(open) && !text.includes(close)) return `{{=${open} ${close}=}}${text}${open}={{ }}=${close}`;
  }
  return text;
}

/** A promptfoo (Nunjucks) template as a Kiln (Mustache) one, each change reported at `at`. */
export function toMustache(template: string, at: string, warnings: string[]): string {
  if (/\{%/.test(template)) warnings.push(`${at}: Nunjucks tags ({% … %}) are not templates in Kiln and stay as text`);
  return template.replace(/\{\{(?!\{)([\s\S]*?)\}\}/g, (tag: string, inner: string) => {
    const expr = inner.trim();
    if (MUSTACHE_TAG.test(expr) || NAME.test(expr)) return tag;
    const [head = "", ...filters] = splitFilters(expr);
    if (NAME.test(head) && filters.length > 0) {
      const names = filters.map((f) => f.trim());
      if (names.every((f) => SAME.has(f) || f === "trim")) {
        for (const f of names.filter((f) => f === "trim"))
          warnings.push(`${at}: the filter "${f}" of {{${head}}} is dropped (Kiln templates are Mustache)`);
        return `{{${head}}}`;
      }
    }
    warnings.push(
      `${at}: ${tag} is a Nunjucks expression Kiln's Mustache templates cannot evaluate; it stays as text (not a variable)`,
    );
    return literal(tag);
  });
}

/** `a | f | g(1)` → ["a", "f", "g(1)"]; a `|` inside brackets or quotes does not split (`(a | f).b` stays whole). */
function splitFilters(expr: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quote: string | null = null;
  let start = 0;
  for (let i = 0; i < expr.length; i++) {
    const c = expr[i];
    if (quote) {
      if (c === quote && expr[i - 1] !== "\\") quote = null;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === "(" || c === "[") depth++;
    else if (c === ")" || c === "]") depth--;
    else if (c === "|" && depth === 0) {
      parts.push(expr.slice(start, i).trim());
      start = i + 1;
    }
  }
  parts.push(expr.slice(start).trim());
  return parts;
}
