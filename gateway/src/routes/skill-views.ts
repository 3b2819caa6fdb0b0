import type { CompositionStep, Skill, SkillContent, SkillVersion } from "@kiln/proto/catalog";
import Type from "typebox";
import { Nullable, ref, Timestamp } from "../schemas.js";
import {
  JsonSchemaView,
  parseJson,
  ToolRefView,
  timestampOf,
  toolRefView,
  VersionStatus,
  VersionSummaryView,
  versionStatusOf,
  versionSummaryView,
} from "./catalog-views.js";
import { iso } from "./views.js";

/** Skill and skill version views and their conversions from the catalog's messages. */

export const CompositionStepView = Type.Object(
  {
    order: Type.Integer({ description: "from 1" }),
    alias: Type.String({ description: "default step<order>" }),
    promptId: Type.String(),
    promptVersionId: Type.String(),
    promptName: Type.String(),
    version: Type.Integer({ description: "the prompt version's number" }),
    variables: Type.Record(Type.String(), Type.Unknown(), {
      description:
        'bindings: {name: "{{input.x}}" | "{{steps.<alias>.output}}" | "{{steps.<alias>.output.field}}" | literal}',
    }),
  },
  { $id: "CompositionStep" },
);
const compositionStepView = (s: CompositionStep) => ({
  order: s.order,
  alias: s.alias,
  promptId: s.promptId,
  promptVersionId: s.promptVersionId,
  promptName: s.promptName,
  version: s.version,
  variables: parseJson(s.variables?.json) as Record<string, unknown>,
});

/** A skill version's content, as the fields of the skill or version that carries it. */
const skillContentView = (c: SkillContent | undefined) => ({
  promptComposition: (c?.promptComposition ?? []).map(compositionStepView),
  tools: (c?.tools ?? []).map(toolRefView),
  inputSchema: parseJson(c?.inputSchema?.json) as Record<string, unknown>,
  outputSchema: parseJson(c?.outputSchema?.json) as Record<string, unknown>,
});

export const SkillView = Type.Object(
  {
    id: Type.String(),
    organizationId: Type.String(),
    name: Type.String(),
    description: Type.String(),
    draftVersionId: Nullable(Type.String()),
    publishedVersionId: Nullable(Type.String()),
    versions: Type.Array(ref(VersionSummaryView)),
    describedVersionId: Type.String({
      description: "the version the fields below describe: ?versionId=, else the draft, else the published one",
    }),
    promptComposition: Type.Array(ref(CompositionStepView)),
    tools: Type.Array(ref(ToolRefView)),
    inputSchema: JsonSchemaView,
    outputSchema: JsonSchemaView,
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: "Skill" },
);
export const skillView = (s: Skill | undefined) => {
  if (!s) throw new Error("catalog returned no skill");
  return {
    id: s.id,
    organizationId: s.organizationId,
    name: s.name,
    description: s.description,
    draftVersionId: s.draftVersionId || null,
    publishedVersionId: s.publishedVersionId || null,
    versions: s.versions.map(versionSummaryView),
    describedVersionId: s.describedVersionId,
    ...skillContentView(s.content),
    createdAt: timestampOf(s.createdAt),
    updatedAt: timestampOf(s.updatedAt),
  };
};

export const SkillVersionView = Type.Object(
  {
    id: Type.String(),
    skillId: Type.String(),
    version: Type.Integer(),
    status: VersionStatus,
    promptComposition: Type.Array(ref(CompositionStepView)),
    tools: Type.Array(ref(ToolRefView)),
    inputSchema: JsonSchemaView,
    outputSchema: JsonSchemaView,
    createdAt: Timestamp,
    publishedAt: Nullable(Timestamp),
  },
  { $id: "SkillVersion" },
);
export const skillVersionView = (v: SkillVersion | undefined) => {
  if (!v) throw new Error("catalog returned no skill version");
  return {
    id: v.id,
    skillId: v.skillId,
    version: v.version,
    status: versionStatusOf(v.status),
    ...skillContentView(v.content),
    createdAt: timestampOf(v.createdAt),
    publishedAt: iso(v.publishedAt),
  };
};
