/**
 * A promptfoo config (promptfooconfig.yaml, as promptfoo's documentation writes them, and as the
 * OpenAI Evals dashboard exports them) turned into a `kiln.bundle/v1` bundle (docs/bundles.md
 * "promptfoo"):
 *
 * - `file://` prompts, tests (CSV, YAML, JSON, JSONL), variables and assertion values are read from
 *   the files sent with the config (by their path relative to it); one that was not sent is
 *   reported for the item needing it, which is skipped;
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
 *   `not-` forms, model-graded ones other than `llm-rubric`…) are reported, never dropped silently;
 *   so is every field Kiln has no place for (`transform`, `metric`, `metadata`, a test's `threshold`);
 *   a grader `provider` becomes the judge's model.
 *
 * Ids are derived from the content (hashes), so importing the same config twice changes nothing.
 */
import {
  BUNDLE_FORMAT,
  type Bundle,
  type BundleCase,
  type BundlePrompt,
  type BundleSkill,
} from "@kiln/contracts/bundle";
import { invalidArgument } from "@kiln/kit/errors";
import { assertionsOf } from "./assertions.js";
import { hash, type JsonObject } from "./config.js";
import { type ConfigFiles, normalizedFiles } from "./files.js";
import { labelOf, promptsOf } from "./prompts.js";
import { graderModelOf, type ModelCatalog, providersOf } from "./providers.js";
import { variablesSchemaOf } from "./schema.js";
import { testsOf } from "./tests.js";

export { parsePromptfooConfig } from "./config.js";
export type { ConfigFiles, ModelCatalog };

/** The top-level fields the converter reads; every other one is reported by name. */
const CONFIG_KEYS = new Set(["description", "prompts", "providers", "targets", "tests", "defaultTest", "scenarios"]);

export interface PromptfooConversion {
  bundle: Bundle;
  /** What could not be imported as it is, each with its place in the config. */
  warnings: string[];
}

export function promptfooToBundle(
  config: JsonObject,
  models: ModelCatalog,
  now: Date,
  given: ConfigFiles = {},
): PromptfooConversion {
  const warnings: string[] = [];
  for (const key of Object.keys(config))
    if (!CONFIG_KEYS.has(key)) warnings.push(`${key} is not imported (Kiln has no such setting)`);
  const files = normalizedFiles(given);
  const prompts = promptsOf(config, files, warnings);
  if (prompts.length === 0) {
    throw invalidArgument("the promptfoo config has no prompt Kiln can import", [
      { field: "config.prompts", issue: warnings.length > 0 ? warnings.join("; ") : "is required" },
    ]);
  }
  const providers = providersOf(config, models, warnings);
  const tests = testsOf(config, files, warnings);
  const modelOf = graderModelOf(models, warnings);
  // Assertions are mapped once per test (the warnings once per place), then shared by every skill.
  const cases = tests.map((t) => ({
    name: t.name.slice(0, 200),
    input: t.vars,
    assertions: t.asserts.flatMap(({ a, at }) =>
      assertionsOf(a, { vars: t.vars, files, grader: t.grader, modelOf }, at, warnings),
    ),
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
      responseFormat: p.responseFormat ?? pr.responseFormat,
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
