/** promptfoo's tests and assertions as Kiln evaluation cases and assertions (unmapped ones reported). */
import { safeRegexProblem } from "@kiln/kit/safe-regex";
import { templateRenderer } from "@kiln/kit/templates";
import { isObject, type Json, type JsonObject } from "./config.js";

export const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Assertion values rendered with the test's variables (a bounded cache, not Mustache's unbounded one). */
export const assertionValues = templateRenderer({ maxChars: 1_000_000 });

/** One promptfoo assertion as Kiln assertions (none when it cannot map, with a warning). */
export function assertionsOf(a: Json, vars: JsonObject, at: string, warnings: string[]): unknown[] {
  if (!isObject(a) || typeof a.type !== "string") {
    warnings.push(`${at}: not an assertion; skipped`);
    return [];
  }
  const render = (v: Json | undefined): Json | undefined =>
    typeof v === "string" ? assertionValues.render(v, vars, String) : v;
  const value = render(a.value);
  const strings = (v: Json | undefined) =>
    (Array.isArray(v) ? v.map((x) => render(x)) : [v]).filter((x): x is string => typeof x === "string");
  const regex = (pattern: string, flags?: string): unknown[] => {
    const problem = safeRegexProblem(pattern, flags);
    if (problem) {
      warnings.push(`${at}: the pattern cannot run in Kiln (${problem}); skipped`);
      return [];
    }
    return [{ type: "regex", pattern, ...(flags && { flags }) }];
  };
  const unsupported = (why: string) => {
    warnings.push(`${at}: ${a.type} is not imported (${why})`);
    return [];
  };
  if (a.weight !== undefined && a.weight !== 1)
    warnings.push(`${at}: weight is ignored (every Kiln assertion must pass)`);
  switch (a.type) {
    case "equals":
      return [{ type: "equals", value: value ?? "" }];
    case "contains":
      return typeof value === "string" ? [{ type: "contains", value }] : unsupported("a non-text value");
    case "icontains":
      return typeof value === "string" ? regex(escapeRegex(value), "i") : unsupported("a non-text value");
    case "contains-all":
    case "icontains-all": {
      const i = a.type.startsWith("i");
      return strings(value).flatMap((s): unknown[] =>
        i ? regex(escapeRegex(s), "i") : [{ type: "contains", value: s }],
      );
    }
    case "contains-any":
    case "icontains-any": {
      const list = strings(value);
      return list.length > 0
        ? regex(list.map(escapeRegex).join("|"), a.type.startsWith("i") ? "i" : undefined)
        : unsupported("no values");
    }
    case "starts-with":
      return typeof value === "string" ? regex(`^${escapeRegex(value)}`) : unsupported("a non-text value");
    case "regex":
      return typeof value === "string" ? regex(value) : unsupported("a non-text pattern");
    case "is-json":
      return [
        {
          type: "json_schema",
          schema: isObject(value) ? value : { type: ["object", "array", "number", "boolean", "null"] },
        },
      ];
    case "contains-json":
      warnings.push(
        `${at}: contains-json is imported as "the whole output is JSON" (Kiln does not look for JSON inside text)`,
      );
      return [
        {
          type: "json_schema",
          schema: isObject(value) ? value : { type: ["object", "array", "number", "boolean", "null"] },
        },
      ];
    case "latency":
      return typeof a.threshold === "number"
        ? [{ type: "max_latency_ms", value: a.threshold }]
        : unsupported("no threshold");
    case "cost":
      return typeof a.threshold === "number"
        ? [{ type: "max_cost_usd", value: a.threshold }]
        : unsupported("no threshold");
    case "llm-rubric":
      return typeof value === "string"
        ? [{ type: "llm_judge", rubric: value, ...(typeof a.threshold === "number" && { threshold: a.threshold }) }]
        : unsupported("a non-text rubric");
    case "javascript":
    case "python":
      return unsupported("Kiln runs no code in assertions");
    default:
      if (a.type.startsWith("not-")) return unsupported("Kiln has no negated assertions");
      return unsupported("Kiln has no assertion that means the same");
  }
}

/** The config's tests with `defaultTest` merged in, as (name, vars, assertions). */
export function testsOf(config: JsonObject, warnings: string[]) {
  const defaults = isObject(config.defaultTest) ? config.defaultTest : {};
  const defaultVars = isObject(defaults.vars) ? defaults.vars : {};
  const defaultAsserts = Array.isArray(defaults.assert) ? defaults.assert : [];
  const raw = config.tests;
  if (typeof raw === "string") {
    warnings.push(`tests: ${raw} is not read (put the tests in the config)`);
    return [];
  }
  if (raw !== undefined && !Array.isArray(raw)) {
    warnings.push("tests: not a list; skipped");
    return [];
  }
  return (raw ?? []).flatMap((t, i) => {
    const at = `tests[${i}]`;
    if (typeof t === "string") {
      warnings.push(`${at}: ${t} is not read (put the tests in the config)`);
      return [];
    }
    if (!isObject(t)) {
      warnings.push(`${at}: not a test; skipped`);
      return [];
    }
    const vars = { ...defaultVars, ...(isObject(t.vars) ? t.vars : {}) };
    for (const [k, v] of Object.entries(vars)) {
      if (typeof v === "string" && v.startsWith("file://"))
        warnings.push(`${at}.vars.${k}: ${v} is not read; the text stays as it is`);
    }
    const asserts = [
      ...defaultAsserts.map((a, j) => ({ a, at: `defaultTest.assert[${j}]` })),
      ...(Array.isArray(t.assert) ? t.assert : []).map((a, j) => ({ a, at: `${at}.assert[${j}]` })),
    ];
    return [{ name: typeof t.description === "string" ? t.description : `test ${i + 1}`, vars, asserts, at }];
  });
}
