import type { FieldIssue } from "@kiln/kit/errors";

/**
 * Text a request body may not carry (docs/api.md "Limits"): a lone UTF-16 surrogate, which JSON can
 * spell (`"\ud800"`) but UTF-8, protobuf and every store refuse. Refused at the edge as
 * invalid_argument naming each field (keys included), instead of a 500 when a service encodes it.
 */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/** The fields of a parsed body whose key or text is not well-formed; [] for most bodies, fast. */
export function malformedTextIssues(text: string, body: unknown): FieldIssue[] {
  // Raw bytes decode to U+FFFD, never to a lone surrogate: only an escape can make one.
  if (!SURROGATE_ESCAPE.test(text)) return [];
  const issues: FieldIssue[] = [];
  const issue = "is not valid Unicode text (it holds a lone UTF-16 surrogate)";
  const walk = (value: unknown, at: string) => {
    if (issues.length >= 20) return;
    if (typeof value === "string") {
      if (!value.isWellFormed()) issues.push({ field: at || "body", issue });
    } else if (Array.isArray(value)) {
      for (const [i, item] of value.entries()) walk(item, `${at}[${i}]`);
    } else if (value !== null && typeof value === "object") {
      for (const [key, item] of Object.entries(value)) {
        const field = at ? `${at}.${key}` : key;
        if (!key.isWellFormed())
          issues.push({ field: field.toWellFormed(), issue: "is a key that is not valid Unicode text" });
        else walk(item, field);
      }
    }
  };
  walk(body, "");
  return issues;
}
