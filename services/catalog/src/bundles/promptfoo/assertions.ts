/** promptfoo's tests and assertions as Kiln evaluation cases and assertions (unmapped ones reported). */
import { safeRegexProblem } from "@kiln/contracts/safe-regex";
import { templateRenderer } from "@kiln/kit/templates";
import { isObject, type Json, type JsonObject } from "./config.js";
import { type ConfigFiles, extensionOf, filePathOf, isCodeRef, isFileRef, parseStructured, readRef } from "./files.js";
import type { Grader } from "./tests.js";

export const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Assertion values rendered with the test's variables (a bounded cache, not Mustache's unbounded one). */
export const assertionValues = templateRenderer({ maxChars: 1_000_000 });

/** What an assertion is converted with: the test's variables, the files, the grader. */
export interface AssertionContext {
  vars: JsonObject;
  files: ConfigFiles;
  /** The test's grader (`options.provider`), for model-graded assertions without their own. */
  grader: Grader | undefined;
  /** A grader provider as a model here; undefined (reported) when there is none. */
  modelOf: (provider: Json, at: string) => string | undefined;
}

const MODEL_GRADED = new Set(["llm-rubric"]);
const WITH_THRESHOLD = new Set(["llm-rubric", "latency", "cost"]);

/** The fields of an assertion Kiln has no place for, each reported by name. */
function reportExtras(a: JsonObject & { type: string }, at: string, warnings: string[]) {
  if (a.weight !== undefined && a.weight !== 1)
    warnings.push(`${at}: weight is ignored (every Kiln assertion must pass)`);
  if (a.transform !== undefined)
    warnings.push(`${at}.transform is not imported (Kiln's assertions check the output as the model gives it)`);
  if (typeof a.metric === "string")
    warnings.push(`${at}.metric "${a.metric}" is not imported (Kiln reports each assertion by its place)`);
  if (a.threshold !== undefined && !WITH_THRESHOLD.has(a.type))
    warnings.push(`${at}.threshold is not imported (${a.type} has no threshold in Kiln)`);
  if (a.provider !== undefined && !MODEL_GRADED.has(a.type))
    warnings.push(`${at}.provider is not imported (${a.type} is not graded by a model in Kiln)`);
  if (a.rubricPrompt !== undefined)
    warnings.push(`${at}.rubricPrompt is not imported (Kiln's judge uses its own grading prompt)`);
  for (const key of Object.keys(a)) {
    if (!["type", "value", "weight", "transform", "metric", "threshold", "provider", "rubricPrompt"].includes(key))
      warnings.push(`${at}.${key} is not imported (Kiln has no such field)`);
  }
}

/** An assertion's `file://` value read (a YAML or JSON file as its value); undefined when it is missing. */
function assertionValueOf(a: JsonObject, files: ConfigFiles, at: string, warnings: string[]): Json | undefined | null {
  const v = a.value;
  if (!isFileRef(v)) return v;
  if (isCodeRef(v)) return v;
  const text = readRef(v, files, at, "the assertion is skipped", warnings);
  if (text === undefined) return null;
  const ext = extensionOf(filePathOf(v));
  return ["json", "yaml", "yml"].includes(ext) ? (parseStructured(text, v, at, warnings) ?? null) : text;
}

/** One promptfoo assertion as Kiln assertions (none when it cannot map, with a warning). */
export function assertionsOf(a: Json, ctx: AssertionContext, at: string, warnings: string[]): unknown[] {
  if (!isObject(a) || typeof a.type !== "string") {
    warnings.push(`${at}: not an assertion; skipped`);
    return [];
  }
  const typed = { ...a, type: a.type };
  reportExtras(typed, at, warnings);
  const raw = assertionValueOf(a, ctx.files, at, warnings);
  if (raw === null) return [];
  const render = (v: Json | undefined): Json | undefined =>
    typeof v === "string" ? assertionValues.render(v, ctx.vars, String) : v;
  const rendered = render(raw);
  // A number or boolean is looked for as its text, as promptfoo does.
  const value = typeof rendered === "number" || typeof rendered === "boolean" ? String(rendered) : rendered;
  // Numbers are matched as their text (promptfoo compares String(value)): `-3` is "-3", never dropped.
  const strings = (v: Json | undefined) =>
    (Array.isArray(v) ? v.map((x) => render(x)) : [v]).flatMap((x) => {
      if (typeof x === "string") return [x];
      if (typeof x === "number" || typeof x === "boolean") return [String(x)];
      if (x !== undefined && x !== null)
        warnings.push(`${at}: ${JSON.stringify(x)} is not a text to look for; skipped`);
      return [];
    });
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
    case "llm-rubric": {
      if (typeof value !== "string") return unsupported(value === undefined ? "no rubric" : "a non-text rubric");
      const grader = a.provider !== undefined ? { provider: a.provider, at: `${at}.provider` } : ctx.grader;
      const model = grader && ctx.modelOf(grader.provider, grader.at);
      return [
        {
          type: "llm_judge",
          rubric: value,
          ...(model && { model }),
          ...(typeof a.threshold === "number" && { threshold: a.threshold }),
        },
      ];
    }
    case "javascript":
    case "python":
      return unsupported("Kiln runs no code in assertions");
    default:
      if (a.type.startsWith("not-")) return unsupported("Kiln has no negated assertions");
      return unsupported("Kiln has no assertion that means the same");
  }
}
