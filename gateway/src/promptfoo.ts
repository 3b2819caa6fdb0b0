/**
 * A promptfoo config (promptfooconfig.yaml, as promptfoo's documentation writes them, and as the
 * OpenAI Evals dashboard exports them) turned into a `kiln.bundle/v1` bundle (docs/bundles.md
 * "promptfoo"):
 *
 * - every prompt becomes a Kiln prompt whose variables schema is inferred from its `{{vars}}` and
 *   the tests' values; a chat prompt's system messages become the system prompt, the rest the
 *   developer prompt; a plain text prompt becomes the system prompt;
 * - every provider becomes one published version of each prompt (its model where Kiln has one,
 *   else the fallback model, reported; temperature, max_tokens and a JSON-schema response_format
 *   from its config); with several providers each version carries a label named after its provider;
 * - every prompt gets a one-step skill of the same versions and labels, and the tests (with
 *   `defaultTest` merged in) become that skill's evaluation cases: promptfoo's prompt × provider
 *   matrix is an evaluation run with the provider labels as targets;
 * - assertions map to Kiln's where one means the same; the others (`javascript`, `python`, the
 *   `not-` forms, model-graded ones other than `llm-rubric`…) are reported, never dropped silently.
 *
 * Ids are derived from the content (hashes), so importing the same config twice changes nothing.
 */
import { createHash } from "node:crypto";
import { BUNDLE_FORMAT, type Bundle, type BundleCase, type BundlePrompt, type BundleSkill } from "@kiln/kit/bundle";
import { invalidArgument } from "@kiln/kit/errors";
import { safeRegexProblem } from "@kiln/kit/safe-regex";
import { parseTemplate, templateRenderer } from "@kiln/kit/templates";
import { parse as parseYaml } from "yaml";

export interface PromptfooConversion {
  bundle: Bundle;
  /** What could not be imported as it is, each with its place in the config. */
  warnings: string[];
}

export interface ModelCatalog {
  /** Model ids this deployment offers ("openai/gpt-4o-mini"). */
  ids: readonly string[];
  /** Where a provider maps to no model here. */
  fallback: string;
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type JsonObject = { [k: string]: Json };

const isObject = (v: unknown): v is JsonObject => typeof v === "object" && v !== null && !Array.isArray(v);
const hash = (...parts: unknown[]) => createHash("sha256").update(JSON.stringify(parts)).digest("hex").slice(0, 24);

/** Parses a promptfoo config given as YAML or JSON text, or already parsed. */
export function parsePromptfooConfig(config: unknown): JsonObject {
  let value = config;
  if (typeof config === "string") {
    try {
      value = parseYaml(config, { maxAliasCount: 100 });
    } catch (e) {
      throw invalidArgument("the promptfoo config is not YAML or JSON", [
        {
          field: "config",
          issue: e instanceof Error ? (e.message.split("\n")[0] ?? "does not parse") : "does not parse",
        },
      ]);
    }
  }
  if (!isObject(value)) {
    throw invalidArgument("a promptfoo config is an object", [
      { field: "config", issue: "must be an object (YAML or JSON)" },
    ]);
  }
  return value;
}

interface PromptSource {
  label: string;
  system: string;
  developer: string | null;
  at: string;
}

interface ProviderSource {
  label: string;
  model: string;
  temperature: number | null;
  maxOutputTokens: number | null;
  responseFormat: JsonObject;
}

/** A label name from free text: lowercase letters, digits and dashes, starting with a letter. */
function labelOf(text: string, taken: Set<string>): string {
  let base = text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^[^a-z]+/, "")
    .replace(/-+$/, "")
    .slice(0, 36);
  if (base === "" || base === "draft" || base === "published" || base === "production" || base === "latest")
    base = `provider-${base}`.replace(/-$/, "");
  let label = base;
  for (let n = 2; taken.has(label); n++) label = `${base}-${n}`;
  taken.add(label);
  return label;
}

/** `{{ name | filter }}` → `{{name}}` (Mustache has no filters); `{% … %}` blocks are reported. */
function toMustache(template: string, at: string, warnings: string[]): string {
  if (/\{%/.test(template)) warnings.push(`${at}: Nunjucks tags ({% … %}) are not templates in Kiln and stay as text`);
  return template.replace(/\{\{\s*([^{}|]+?)\s*\|\s*([^{}]+?)\s*\}\}/g, (_m, name: string, filter: string) => {
    warnings.push(`${at}: the filter "${filter}" of {{${name}}} is dropped (Kiln templates are Mustache)`);
    return `{{${name}}}`;
  });
}

function promptsOf(config: JsonObject, warnings: string[]): PromptSource[] {
  const raw = config.prompts;
  const list: { value: Json; label?: string; at: string }[] = [];
  if (typeof raw === "string") list.push({ value: raw, at: "prompts" });
  else if (Array.isArray(raw)) list.push(...raw.map((value, i) => ({ value, at: `prompts[${i}]` })));
  else if (isObject(raw))
    for (const [label, value] of Object.entries(raw)) list.push({ value, label, at: `prompts.${label}` });
  const out: PromptSource[] = [];
  for (const item of list) {
    let value = item.value;
    let label = item.label;
    if (isObject(value)) {
      label = typeof value.label === "string" ? value.label : typeof value.id === "string" ? value.id : label;
      value = value.raw ?? null;
    }
    if (typeof value !== "string") {
      warnings.push(`${item.at}: not a prompt text; skipped`);
      continue;
    }
    if (/^file:\/\//.test(value) || /^(?:python|javascript):/.test(value)) {
      warnings.push(`${item.at}: ${value} is not read (import the prompt's text, not a file or a function)`);
      continue;
    }
    const messages = chatMessagesOf(value);
    let system: string;
    let developer: string | null = null;
    if (messages) {
      system = messages
        .filter((m) => m.role === "system")
        .map((m) => m.content)
        .join("\n\n");
      const rest = messages.filter((m) => m.role !== "system");
      if (rest.some((m) => m.role === "assistant"))
        warnings.push(`${item.at}: assistant turns become part of the developer prompt`);
      developer = rest.length > 0 ? rest.map((m) => m.content).join("\n\n") : null;
      if (system === "") {
        system = developer ?? "";
        developer = null;
      }
    } else system = value;
    out.push({
      label: (label ?? value.replace(/\s+/g, " ").trim()).slice(0, 80) || `prompt ${out.length + 1}`,
      system: toMustache(system, item.at, warnings),
      developer: developer === null ? null : toMustache(developer, item.at, warnings),
      at: item.at,
    });
  }
  return out;
}

/** A JSON array of `{role, content}` given as the prompt's text (promptfoo's chat format). */
function chatMessagesOf(text: string): { role: string; content: string }[] | undefined {
  const trimmed = text.trim();
  if (!trimmed.startsWith("[")) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(trimmed);
  } catch {
    try {
      parsed = parseYaml(trimmed);
    } catch {
      return undefined;
    }
  }
  if (!Array.isArray(parsed) || parsed.length === 0) return undefined;
  const messages = parsed.map((m) =>
    isObject(m) && typeof m.role === "string" && typeof m.content === "string"
      ? { role: m.role, content: m.content }
      : null,
  );
  return messages.every((m) => m !== null) ? (messages as { role: string; content: string }[]) : undefined;
}

/** promptfoo's provider id → a Kiln model id ("openai:chat:gpt-4o" → "openai/gpt-4o"). */
function modelIdOf(providerId: string): string {
  if (providerId === "echo") return "local/echo";
  const parts = providerId.split(":");
  const provider = parts[0] ?? "";
  const model =
    parts.length > 2 && ["chat", "messages", "completion", "responses"].includes(parts[1] ?? "")
      ? parts.slice(2).join(":")
      : parts.slice(1).join(":");
  return `${provider}/${model}`;
}

function providersOf(config: JsonObject, models: ModelCatalog, warnings: string[]): ProviderSource[] {
  const raw = config.providers ?? config.targets;
  const list: { value: Json; at: string }[] = [];
  if (typeof raw === "string") list.push({ value: raw, at: "providers" });
  else if (Array.isArray(raw)) list.push(...raw.map((value, i) => ({ value, at: `providers[${i}]` })));
  const out: ProviderSource[] = [];
  for (const { value, at } of list) {
    const id =
      typeof value === "string" ? value : isObject(value) && typeof value.id === "string" ? value.id : undefined;
    if (!id) {
      warnings.push(`${at}: a provider without an id; skipped`);
      continue;
    }
    const options = isObject(value) && isObject(value.config) ? value.config : {};
    const wanted = modelIdOf(id);
    let model = wanted;
    if (!models.ids.includes(wanted)) {
      model = models.fallback;
      warnings.push(`${at}: ${id} is not a model here; its versions use ${models.fallback}`);
    }
    const temperature = typeof options.temperature === "number" ? options.temperature : null;
    const maxTokens = options.max_tokens ?? options.max_completion_tokens ?? options.max_output_tokens;
    let responseFormat: JsonObject = { type: "text" };
    const rf = options.response_format;
    if (isObject(rf) && rf.type === "json_schema" && isObject(rf.json_schema) && isObject(rf.json_schema.schema)) {
      responseFormat = {
        type: "json_schema",
        ...(typeof rf.json_schema.name === "string" && { name: rf.json_schema.name }),
        schema: rf.json_schema.schema,
      };
    } else if (isObject(rf) && rf.type === "json_object") {
      responseFormat = { type: "json_schema", schema: { type: "object" } };
    } else if (rf !== undefined) warnings.push(`${at}: config.response_format is not imported`);
    for (const key of Object.keys(options)) {
      if (!["temperature", "max_tokens", "max_completion_tokens", "max_output_tokens", "response_format"].includes(key))
        warnings.push(`${at}: config.${key} is not imported`);
    }
    const label = isObject(value) && typeof value.label === "string" ? value.label : id;
    out.push({
      label,
      model,
      temperature,
      maxOutputTokens: typeof maxTokens === "number" && Number.isInteger(maxTokens) ? maxTokens : null,
      responseFormat,
    });
  }
  if (out.length === 0) {
    warnings.push(`providers: none given; the prompts use ${models.fallback}`);
    out.push({
      label: models.fallback,
      model: models.fallback,
      temperature: null,
      maxOutputTokens: null,
      responseFormat: { type: "text" },
    });
  }
  return out;
}

/** A JSON Schema for a value seen in the tests: its type, and an object's properties. */
function schemaOfValues(values: Json[]): JsonObject {
  const types = new Set(
    values.map((v) =>
      v === null
        ? "null"
        : Array.isArray(v)
          ? "array"
          : typeof v === "number" && Number.isInteger(v)
            ? "integer"
            : typeof v,
    ),
  );
  if (types.size !== 1) return {};
  const [type] = [...types];
  if (type === "object") {
    const objects = values as JsonObject[];
    const keys = [...new Set(objects.flatMap((o) => Object.keys(o)))];
    return {
      type: "object",
      properties: Object.fromEntries(
        keys.map((k) => [k, schemaOfValues(objects.filter((o) => Object.hasOwn(o, k)).map((o) => o[k] as Json))]),
      ),
    };
  }
  return type === "integer" ? { type: "number" } : { type: type ?? "string" };
}

/** The variables schema of a template: every top-level name it uses, typed by the tests' values. */
function variablesSchemaOf(
  templates: readonly string[],
  tests: readonly JsonObject[],
  at: string,
  warnings: string[],
): JsonObject {
  const names = new Set<string>();
  for (const t of templates) {
    try {
      const walk = (spans: unknown[]) => {
        for (const span of spans as [string, string, number, number, unknown[]?][]) {
          const [type, value, , , children] = span;
          if (["name", "&", "#", "^"].includes(type)) {
            const top = value.split(".")[0];
            if (top && top !== ".") names.add(top);
          }
          if (children) walk(children);
        }
      };
      walk(parseTemplate(t));
    } catch (e) {
      warnings.push(`${at}: the template does not parse (${e instanceof Error ? e.message : String(e)})`);
    }
  }
  const properties: JsonObject = {};
  const required: string[] = [];
  for (const name of [...names].sort()) {
    const values = tests.filter((v) => Object.hasOwn(v, name)).map((v) => v[name] as Json);
    const schema = values.length > 0 ? schemaOfValues(values) : { type: "string" };
    properties[name] =
      Object.keys(schema).length > 0 ? schema : { description: "values of several types in the tests" };
    if (tests.length > 0 && values.length === tests.length) required.push(name);
  }
  return { type: "object", properties, ...(required.length > 0 && { required }) };
}

const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Assertion values rendered with the test's variables (a bounded cache, not Mustache's unbounded one). */
const assertionValues = templateRenderer({ maxChars: 1_000_000 });

/** One promptfoo assertion as Kiln assertions (none when it cannot map, with a warning). */
function assertionsOf(a: Json, vars: JsonObject, at: string, warnings: string[]): unknown[] {
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
function testsOf(config: JsonObject, warnings: string[]) {
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

export function promptfooToBundle(config: JsonObject, models: ModelCatalog, now: Date): PromptfooConversion {
  const warnings: string[] = [];
  const prompts = promptsOf(config, warnings);
  if (prompts.length === 0) {
    throw invalidArgument("the promptfoo config has no prompt Kiln can import", [
      { field: "config.prompts", issue: warnings.length > 0 ? warnings.join("; ") : "is required" },
    ]);
  }
  const providers = providersOf(config, models, warnings);
  const tests = testsOf(config, warnings);
  // Assertions are mapped once per test (the warnings once per place), then shared by every skill.
  const cases = tests.map((t) => ({
    name: t.name.slice(0, 200),
    input: t.vars,
    assertions: t.asserts.flatMap(({ a, at }) => assertionsOf(a, t.vars, at, warnings)),
  }));
  const taken = new Set<string>();
  const providerLabels = providers.length > 1 ? providers.map((p) => labelOf(p.label, taken)) : [];
  const time = (ms: number) => new Date(now.getTime() + ms).toISOString();
  const bundlePrompts: BundlePrompt[] = [];
  const skills: BundleSkill[] = [];
  const description = typeof config.description === "string" ? config.description.slice(0, 2_000) : "";
  for (const p of prompts) {
    const variablesSchema = variablesSchemaOf(
      [p.system, p.developer ?? ""],
      tests.map((t) => t.vars),
      p.at,
      warnings,
    );
    const promptId = `pfprm_${hash(p.system, p.developer)}`;
    // The first provider's version is production: it is published last.
    const publishedAt = (k: number) => time(k === 0 ? providers.length : k);
    const versions = providers.map((pr, k) => ({
      id: `pfpv_${hash(promptId, pr)}`,
      version: k + 1,
      status: "published" as const,
      createdAt: time(k),
      publishedAt: publishedAt(k),
      systemPrompt: p.system,
      developerPrompt: p.developer,
      variablesSchema,
      responseFormat: pr.responseFormat,
      temperature: pr.temperature,
      maxOutputTokens: pr.maxOutputTokens,
      model: pr.model,
      tools: [],
    }));
    const labels: Record<string, number> = { production: 1 };
    providerLabels.forEach((label, k) => {
      labels[label] = k + 1;
    });
    bundlePrompts.push({
      id: promptId,
      name: p.label,
      description,
      defaultModel: providers[0]?.model ?? null,
      createdAt: time(0),
      labels,
      versions,
    });
    const variables = Object.fromEntries(
      Object.keys((variablesSchema.properties as JsonObject) ?? {}).map((name) => [name, `{{input.${name}}}`]),
    );
    const skillId = `pfskl_${hash(promptId)}`;
    skills.push({
      id: skillId,
      name: `promptfoo: ${p.label}`.slice(0, 200),
      description,
      createdAt: time(0),
      labels: { ...labels },
      versions: versions.map((v, k) => ({
        id: `pfsv_${hash(skillId, v.id)}`,
        version: k + 1,
        status: "published" as const,
        createdAt: time(k),
        publishedAt: publishedAt(k),
        promptComposition: [{ alias: "main", promptId, promptVersionId: v.id, variables }],
        tools: [],
      })),
      evaluationCases: cases.map(
        (k, j): BundleCase => ({
          id: `pfevc_${hash(skillId, j, k)}`,
          name: k.name,
          input: k.input,
          assertions: k.assertions,
          createdAt: time(j),
        }),
      ),
    });
  }
  return {
    bundle: { format: BUNDLE_FORMAT, tools: [], prompts: bundlePrompts, skills, agents: [] },
    warnings: [...new Set(warnings)],
  };
}
