/**
 * What a skill answers with: the skill with its versions and the version described, the document
 * a skill version diff compares, and the step contract of a pinned prompt version.
 */
import { type DomainError, failedPrecondition } from "@kiln/kit/errors";
import type { JsonObject, JsonValue } from "./domain/json-schema.js";
import { parseResponseFormat } from "./domain/prompt-version.js";
import { deriveSkillSchemas, type StepContract } from "./domain/skill-composition.js";
import { toolPinOf } from "./domain/tool-pins.js";
import type { CompositionStepDoc, PromptVersionDoc, SkillDoc, SkillVersionDoc } from "./store/catalog-store.js";
import { type DescribedVersions, describeVersions } from "./versioned/described.js";

/** A skill with its versions (oldest first) and the version its composition fields describe. */
export interface SkillView extends DescribedVersions<SkillVersionDoc> {
  skill: SkillDoc;
}

export interface PromptSelector {
  promptId: string;
  promptVersionId?: string;
  alias?: string;
  variablesJson?: string;
}

export const EMPTY_SCHEMAS = deriveSkillSchemas([]);

export function skillView(skill: SkillDoc, versions: SkillVersionDoc[], versionId = ""): SkillView {
  return { skill, ...describeVersions("skill", skill._id, versions, versionId) };
}

/** A composition step as a skill's answers and diffs show it: its variables made of their JSON text by `variablesOf`. */
export const compositionStepOf = <V>(s: CompositionStepDoc, variablesOf: (text: string) => V) => ({
  order: s.order,
  alias: s.alias,
  promptId: s.promptId,
  promptVersionId: s.promptVersionId,
  promptName: s.promptName,
  version: s.version,
  variables: variablesOf(s.variables),
});

/** The document a skill version diff compares (api.md "Version diffs"). */
export function skillVersionDocument(v: SkillVersionDoc): JsonObject {
  return {
    promptComposition: v.promptComposition.map((s) => compositionStepOf(s, (text) => JSON.parse(text) as JsonValue)),
    tools: v.tools.map(toolPinOf),
    inputSchema: JSON.parse(v.inputSchema),
    outputSchema: JSON.parse(v.outputSchema),
  };
}

export function publishedVersionRefused(version: SkillVersionDoc): DomainError {
  return failedPrecondition(`skill version ${version.version} is published and cannot change; create a new version`, [
    { field: "skillVersionId", issue: "is published" },
  ]);
}

/** The step contract of a pinned prompt version, for binding checks and derived schemas. */
export function contractOf(alias: string, variables: JsonObject, version: PromptVersionDoc): StepContract {
  return {
    alias,
    variables,
    variablesSchema: JSON.parse(version.variablesSchema) as JsonObject,
    responseFormat: parseResponseFormat(version.responseFormat),
  };
}
