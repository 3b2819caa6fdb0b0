import type { CompositionStep, Skill, SkillContent, SkillVersion } from "@kiln/proto/catalog";
import Type from "typebox";
import { ref } from "../schemas.js";
import { fromCatalog, JsonSchemaView, parseJson, ToolRefView, toolRefView } from "./catalog-views.js";
import { describedShape, OptionalVersionId, resourceShape, versionShape } from "./versioned-views.js";
import { fieldsOf } from "./views.js";

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
  ...fieldsOf(s),
  variables: parseJson(s.variables?.json) as Record<string, unknown>,
});

/** A skill version's content, as the fields of the skill or version that carries it. */
const skillContentView = (c: SkillContent | undefined) => ({
  promptComposition: (c?.promptComposition ?? []).map(compositionStepView),
  tools: (c?.tools ?? []).map(toolRefView),
  inputSchema: parseJson(c?.inputSchema?.json) as Record<string, unknown>,
  outputSchema: parseJson(c?.outputSchema?.json) as Record<string, unknown>,
});

/** A skill version's content fields. */
const SkillContentFields = {
  promptComposition: Type.Array(ref(CompositionStepView)),
  tools: Type.Array(ref(ToolRefView)),
  inputSchema: JsonSchemaView,
  outputSchema: JsonSchemaView,
};

export const SkillView = resourceShape.schema(
  {
    draftVersionId: OptionalVersionId,
    publishedVersionId: OptionalVersionId,
    ...describedShape.schema("the version the fields below describe"),
    ...SkillContentFields,
  },
  {},
  { $id: "Skill" },
);
export const skillView = fromCatalog.view("skill", (s: Skill) =>
  resourceShape.view(
    s,
    {
      draftVersionId: s.draftVersionId || null,
      publishedVersionId: s.publishedVersionId || null,
      ...describedShape.view(s),
      ...skillContentView(s.content),
    },
    {},
  ),
);

export const SkillVersionView = versionShape.schema({ skillId: Type.String() }, SkillContentFields, {
  $id: "SkillVersion",
});
export const skillVersionView = fromCatalog.view("skill version", (v: SkillVersion) =>
  versionShape.view(v, { skillId: v.skillId }, skillContentView(v.content)),
);
