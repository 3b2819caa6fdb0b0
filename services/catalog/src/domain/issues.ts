import { type FieldIssue, invalidArgument } from "@kiln/kit/errors";
import { LIMITS } from "@kiln/kit/limits";

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds.
const CONTROL = /[\u0000-\u001f\u007f]/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds.
const CONTROL_IN_LINES = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;

/**
 * Collects every field issue of a request so they are reported together as one invalid_argument
 * (api.md "Errors": `details: [{ field, issue }]`). Nothing is written while any issue is pending.
 */
export class Issues {
  private readonly list: FieldIssue[] = [];

  add(field: string, issue: string): this {
    if (!this.list.some((i) => i.field === field && i.issue === issue)) this.list.push({ field, issue });
    return this;
  }

  get count(): number {
    return this.list.length;
  }

  /** The issues collected so far. */
  all(): readonly FieldIssue[] {
    return this.list;
  }

  /**
   * A trimmed, required (unless `min` is 0) text: one line without control characters such as a
   * name, or with `lines` (a description) tabs and line breaks allowed.
   */
  text(
    field: string,
    value: string,
    { min = 1, max = LIMITS.nameChars, lines = false }: { min?: number; max?: number; lines?: boolean } = {},
  ): string {
    const v = value.trim();
    if (v.length < min) this.add(field, min === 1 ? "is required" : `must be at least ${min} characters`);
    else if (v.length > max) this.add(field, `must be at most ${max} characters`);
    else if (v.includes("\0")) this.add(field, "must not contain NUL characters");
    else if ((lines ? CONTROL_IN_LINES : CONTROL).test(v)) {
      this.add(field, lines ? "must not contain control characters" : "must be one line without control characters");
    }
    return v;
  }

  /** Free text kept exactly as given (templates): only its length and NUL characters are checked. */
  content(
    field: string,
    value: string,
    { min = 1, max = LIMITS.promptTextChars }: { min?: number; max?: number } = {},
  ): string {
    if (value.length < min) this.add(field, "is required");
    else if (value.length > max) this.add(field, `must be at most ${max} characters`);
    else if (value.includes("\0")) this.add(field, "must not contain NUL characters");
    return value;
  }

  throwIfAny(message = "invalid request"): void {
    if (this.list.length > 0) throw invalidArgument(message, [...this.list]);
  }
}

/** `base.key`, or `base[3]` for an array index: the notation of api.md's `details[].field`. */
export { fieldPath } from "@kiln/contracts/field-issues";
