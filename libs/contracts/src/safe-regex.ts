/**
 * Regular expressions that tenants write (JSON Schema `pattern`, `patternProperties`,
 * `propertyNames`, evaluation `regex` assertions) run with RE2 semantics (re2js, a pure-JS port of
 * RE2): matching takes time linear in the input whatever the pattern, so no pattern and no input can
 * hold the shared event loop. Patterns RE2 cannot run (backreferences, lookahead) are refused when
 * they are saved.
 */
import { RE2JS } from "re2js";

export interface SafeRegex {
  /** Whether the pattern matches somewhere in `input` (like RegExp.prototype.test without `g`). */
  test(input: string): boolean;
  /** `/pattern/flags`: ajv caches compiled patterns by it. */
  toString(): string;
}

const FLAGS: Record<string, number> = { i: RE2JS.CASE_INSENSITIVE, m: RE2JS.MULTILINE, s: RE2JS.DOTALL };

/** Compiles `pattern`; throws an Error whose message says why RE2 cannot run it. */
export function compileSafeRegex(pattern: string, flags = ""): SafeRegex {
  let bits = 0;
  for (const flag of flags) {
    // `u` is how RE2 reads every pattern anyway; `d`, `g` and `y` change nothing for a test.
    if (flag === "u" || flag === "d" || flag === "g" || flag === "y") continue;
    const bit = FLAGS[flag];
    if (bit === undefined)
      throw new Error(`uses the flag "${flag}", which Kiln does not support (d, g, i, m, s, u and y are)`);
    bits |= bit;
  }
  try {
    const compiled = RE2JS.compile(pattern, bits);
    // ajv caches compiled patterns by toString(): each must say which pattern it is.
    return { test: (input) => compiled.matcher(input).find(), toString: () => `/${pattern}/${flags}` };
  } catch (e) {
    const reason = e instanceof Error ? e.message.replace(/^error parsing regexp: /, "") : String(e);
    throw new Error(
      `is not a pattern Kiln can run in linear time (RE2 syntax: no backreferences or lookaround): ${reason}`,
    );
  }
}

/** Why `pattern` cannot be used; undefined when it can. */
export function safeRegexProblem(pattern: string, flags = ""): string | undefined {
  try {
    compileSafeRegex(pattern, flags);
    return undefined;
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
}
