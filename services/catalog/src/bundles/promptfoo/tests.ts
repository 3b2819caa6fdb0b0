/**
 * The tests of a promptfoo config, written in it or kept in files, with `defaultTest` merged in:
 * their variables (`file://` values read), assertions and options. What Kiln has no place for (a
 * test's threshold, metadata, an output transform) is reported by name.
 */
import { isObject, type Json, type JsonObject } from "./config.js";
import { type ConfigFiles, isCodeRef, isFileRef, parseStructured, readRef, varFromFile } from "./files.js";
import { type FileTest, testsFromFile } from "./test-files.js";

export interface TestSource {
  name: string;
  vars: JsonObject;
  asserts: { a: Json; at: string }[];
  /** The grader promptfoo's `options.provider` names (and where), for the model-graded assertions. */
  grader: Grader | undefined;
  at: string;
}

export type Grader = { provider: Json; at: string };

const TEST_KEYS = new Set(["description", "vars", "assert", "options"]);

/** A test's (or defaultTest's) `options`, reported by name; the grader provider is kept. */
function optionsOf(options: Json | undefined, at: string, warnings: string[]): Grader | undefined {
  if (options === undefined) return undefined;
  if (!isObject(options)) {
    warnings.push(`${at}.options: not an object; skipped`);
    return undefined;
  }
  for (const key of Object.keys(options)) {
    if (key === "provider") continue;
    const why =
      key === "transform" || key === "postprocess"
        ? "Kiln's assertions check the output as the model gives it"
        : key === "rubricPrompt"
          ? "Kiln's judge uses its own grading prompt"
          : "Kiln has no such option";
    warnings.push(`${at}.options.${key} is not imported (${why})`);
  }
  return options.provider === undefined ? undefined : { provider: options.provider, at: `${at}.options.provider` };
}

/** The fields of a test Kiln has no place for, each reported by name. */
function reportExtras(test: JsonObject, at: string, warnings: string[]) {
  for (const key of Object.keys(test)) {
    if (TEST_KEYS.has(key)) continue;
    const why =
      key === "threshold"
        ? "every Kiln assertion must pass"
        : key === "metadata"
          ? "Kiln's evaluation cases have no metadata"
          : key === "provider" || key === "providers"
            ? "the case runs on the evaluation's targets"
            : "Kiln has no such field";
    warnings.push(`${at}.${key} is not imported (${why})`);
  }
}

/** The variables with their `file://` values read; undefined when a file is missing (reported). */
function varsOf(vars: JsonObject, files: ConfigFiles, at: string, warnings: string[]): JsonObject | undefined {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(vars)) {
    if (!isFileRef(v)) {
      out[k] = v;
      continue;
    }
    if (isCodeRef(v)) {
      warnings.push(`${at}.vars.${k}: ${v} is code, which Kiln does not run; the test is skipped`);
      return undefined;
    }
    const text = readRef(v, files, `${at}.vars.${k}`, "the test is skipped", warnings);
    const value = text === undefined ? undefined : varFromFile(v, text, `${at}.vars.${k}`, warnings);
    if (value === undefined) return undefined;
    out[k] = value;
  }
  return out;
}

/** The list of tests: written in the config, or `file://` references to tests files. */
function rawTestsOf(raw: Json | undefined, files: ConfigFiles, warnings: string[]): FileTest[] {
  if (raw === undefined || raw === null) return [];
  if (typeof raw === "string") {
    if (isFileRef(raw)) return testsFromFile(raw, files, "tests", warnings);
    warnings.push(`tests: ${raw} is not a file:// reference; skipped`);
    return [];
  }
  if (!Array.isArray(raw)) {
    warnings.push("tests: not a list; skipped");
    return [];
  }
  return raw.flatMap((t, i): FileTest[] => {
    if (typeof t !== "string") return [{ test: t, at: `tests[${i}]` }];
    if (isFileRef(t)) return testsFromFile(t, files, `tests[${i}]`, warnings);
    warnings.push(`tests[${i}]: ${t} is not a file:// reference; skipped`);
    return [];
  });
}

/**
 * promptfoo's `scenarios`: each scenario's tests run once per entry of its `config`, the entry's
 * variables under the test's (the test's win) and its assertions before the test's; a scenario
 * without tests makes a test of each entry. Other scenario fields are reported by name.
 */
function scenarioTestsOf(raw: Json | undefined, files: ConfigFiles, warnings: string[]): FileTest[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) {
    warnings.push("scenarios: not a list; skipped");
    return [];
  }
  return raw.flatMap((scenario, i): FileTest[] => {
    const at = `scenarios[${i}]`;
    if (!isObject(scenario)) {
      warnings.push(`${at}: not a scenario; skipped`);
      return [];
    }
    for (const key of Object.keys(scenario))
      if (!["description", "config", "tests"].includes(key))
        warnings.push(`${at}.${key} is not imported (Kiln has no such field)`);
    const entries = (Array.isArray(scenario.config) ? scenario.config : [{}]).map((e, k) => ({
      e: isObject(e) ? e : {},
      at: `${at}.config[${k}]`,
    }));
    const tests = rawTestsOf(scenario.tests, files, warnings).map((t) => ({ ...t, at: `${at}.${t.at}` }));
    const name = typeof scenario.description === "string" ? scenario.description : `scenario ${i + 1}`;
    if (tests.length === 0) return entries.map(({ e, at: where }) => ({ test: e, at: where }));
    return entries.flatMap(({ e, at: where }, k) =>
      tests.map(({ test, at: testAt }, j): FileTest => {
        const t = isObject(test) ? test : {};
        const own = typeof t.description === "string" ? t.description : `test ${j + 1}`;
        return {
          test: {
            ...e,
            ...t,
            description: `${own} (${name}, ${entries.length > 1 ? `config ${k + 1}` : "its config"})`,
            vars: { ...(isObject(e.vars) ? e.vars : {}), ...(isObject(t.vars) ? t.vars : {}) },
            assert: [...(Array.isArray(e.assert) ? e.assert : []), ...(Array.isArray(t.assert) ? t.assert : [])],
          },
          at: `${testAt} × ${where}`,
        };
      }),
    );
  });
}

/** `defaultTest`, written in the config or in a file. */
function defaultTestOf(config: JsonObject, files: ConfigFiles, warnings: string[]): JsonObject {
  const raw = config.defaultTest;
  if (isFileRef(raw)) {
    const text = readRef(raw, files, "defaultTest", "it is skipped", warnings);
    const value = text === undefined ? undefined : parseStructured(text, raw, "defaultTest", warnings);
    return isObject(value) ? value : {};
  }
  return isObject(raw) ? raw : {};
}

/** The config's tests with `defaultTest` merged in, as (name, vars, assertions, grader). */
export function testsOf(config: JsonObject, files: ConfigFiles, warnings: string[]): TestSource[] {
  const defaults = defaultTestOf(config, files, warnings);
  reportExtras(defaults, "defaultTest", warnings);
  const defaultGrader = optionsOf(defaults.options, "defaultTest", warnings);
  const defaultVars = varsOf(isObject(defaults.vars) ? defaults.vars : {}, files, "defaultTest", warnings) ?? {};
  const defaultAsserts = Array.isArray(defaults.assert) ? defaults.assert : [];
  const all = [...rawTestsOf(config.tests, files, warnings), ...scenarioTestsOf(config.scenarios, files, warnings)];
  return all.flatMap(({ test: t, at }, i): TestSource[] => {
    if (!isObject(t)) {
      warnings.push(`${at}: not a test; skipped`);
      return [];
    }
    reportExtras(t, at, warnings);
    const grader = optionsOf(t.options, at, warnings) ?? defaultGrader;
    const vars = varsOf({ ...defaultVars, ...(isObject(t.vars) ? t.vars : {}) }, files, at, warnings);
    if (!vars) return [];
    const asserts = [
      ...defaultAsserts.map((a, j) => ({ a, at: `defaultTest.assert[${j}]` })),
      ...(Array.isArray(t.assert) ? t.assert : []).map((a, j) => ({ a, at: `${at}.assert[${j}]` })),
    ];
    const name = typeof t.description === "string" && t.description !== "" ? t.description : `test ${i + 1}`;
    return [{ name, vars, asserts, grader, at }];
  });
}
