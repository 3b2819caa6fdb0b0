/**
 * What a skill answers with: the skill with its versions and the version described, the document
 * a skill version diff compares, and the step contract of a pinned prompt version.
 */
import { type DomainError, failedPrecondition, notFound } from "@kiln/kit/errors";
import type { JsonObject } from "./domain/json-schema.js";
import { parseResponseFormat } from "./domain/prompt-version.js";
import { deriveSkillSchemas, type StepContract } from "./domain/skill-composition.js";
import { byVersionAscending, latestVersion, livePublishedVersion } from "./domain/versions.js";
import type { PromptVersionDoc, SkillDoc, SkillVersionDoc } from "./store/catalog-store.js";

/** A skill with its versions (oldest first) and the version its composition fields describe. */
export interface SkillView {
  skill: SkillDoc;
  versions: SkillVersionDoc[];
  draftVersionId: string | null;
  publishedVersionId: string | null;
  /** The version asked for, else the draft, else the live published one. */
  described: SkillVersionDoc;
}

export interface PromptSelector {
  promptId: string;
  promptVersionId?: string;
  alias?: string;
  variablesJson?: string;
}

export const EMPTY_SCHEMAS = deriveSkillSchemas([]);

export function skillView(skill: SkillDoc, versions: SkillVersionDoc[], versionId = ""): SkillView {
  const sorted = [...versions].sort(byVersionAscending);
  const draft = sorted.find((v) => v.status === "draft");
  const published = livePublishedVersion(sorted);
  let described = draft ?? published ?? latestVersion(sorted);
  if (versionId !== "") {
    described = sorted.find((v) => v._id === versionId);
    if (!described) throw notFound("skill version");
  }
  // Every skill is created with version 1.
  if (!described) throw new Error(`skill ${skill._id} has no version`);
  return {
    skill,
    versions: sorted,
    draftVersionId: draft?._id ?? null,
    publishedVersionId: published?._id ?? null,
    described,
  };
}

/** The document a skill version diff compares (api.md "Version diffs"). */
export function skillVersionDocument(v: SkillVersionDoc): JsonObject {
  return {
    promptComposition: v.promptComposition.map((s) => ({
      order: s.order,
      alias: s.alias,
      promptId: s.promptId,
      promptVersionId: s.promptVersionId,
      promptName: s.promptName,
      version: s.version,
      variables: JSON.parse(s.variables),
    })),
    tools: v.tools.map((t) => ({ toolId: t.toolId, toolVersionId: t.toolVersionId, toolKey: t.toolKey })),
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
