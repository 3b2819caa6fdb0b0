/**
 * The export bundle (`kiln.bundle/v1`, docs/bundles.md): an organization's prompts, tools, skills
 * and agents with every version, their labels and published versions, and the skills' evaluation
 * cases. Never secrets, runs or members. Ids are the exporting organization's; an import maps each
 * to an id of its own and rewrites every reference (tool pins, compositions, workflow refs).
 *
 * One schema serves the gateway (request validation, the OpenAPI document), the catalog (it checks
 * a bundle it is handed over RPC the same way) and docs/bundle.schema.json (a test keeps them equal).
 */
import Type, { type Static, type TSchema } from "typebox";

export const BUNDLE_FORMAT = "kiln.bundle/v1";

const Id = Type.String({ minLength: 1, maxLength: 200 });
const Time = Type.String({ format: "date-time" });
const JsonObject = Type.Record(Type.String(), Type.Unknown());
const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const VersionNumber = Type.Integer({ minimum: 1, maximum: 1_000_000 });
const Status = Type.Union([Type.Literal("draft"), Type.Literal("published")]);
const closed = { additionalProperties: false } as const;

/** The version each label names, by number; `production` is the live published version. */
const Labels = Type.Record(Type.String({ pattern: "^[a-z][a-z0-9-]{0,39}$" }), VersionNumber, {
  description: "label → version number; production is derived from the versions and checked against them",
});

const ToolPin = Type.Object({ toolId: Id, toolVersionId: Id, toolKey: Type.String() }, closed);

const ToolVersion = Type.Object(
  { id: Id, version: VersionNumber, type: Type.String(), config: JsonObject, inputSchema: JsonObject, createdAt: Time },
  closed,
);

const Tool = Type.Object(
  {
    id: Id,
    toolKey: Type.String(),
    name: Type.String(),
    description: Type.String(),
    createdAt: Time,
    versions: Type.Array(ToolVersion, { minItems: 1 }),
  },
  closed,
);

const versionTimes = {
  status: Status,
  createdAt: Time,
  publishedAt: Nullable(Time),
};

const PromptVersion = Type.Object(
  {
    id: Id,
    version: VersionNumber,
    ...versionTimes,
    systemPrompt: Type.String(),
    developerPrompt: Nullable(Type.String()),
    variablesSchema: JsonObject,
    responseFormat: JsonObject,
    temperature: Nullable(Type.Number()),
    maxOutputTokens: Nullable(Type.Integer()),
    model: Nullable(Type.String()),
    tools: Type.Array(ToolPin),
  },
  closed,
);

const Prompt = Type.Object(
  {
    id: Id,
    name: Type.String(),
    description: Type.String(),
    defaultModel: Nullable(Type.String()),
    createdAt: Time,
    labels: Labels,
    versions: Type.Array(PromptVersion),
  },
  closed,
);

const CompositionStep = Type.Object(
  { alias: Type.String(), promptId: Id, promptVersionId: Id, variables: JsonObject },
  closed,
);

const SkillVersion = Type.Object(
  {
    id: Id,
    version: VersionNumber,
    ...versionTimes,
    promptComposition: Type.Array(CompositionStep),
    tools: Type.Array(ToolPin),
  },
  closed,
);

const EvaluationCase = Type.Object(
  {
    id: Id,
    name: Type.String(),
    input: JsonObject,
    expectedOutput: Type.Optional(Type.Unknown()),
    assertions: Type.Array(Type.Unknown()),
    createdAt: Time,
  },
  closed,
);

const Skill = Type.Object(
  {
    id: Id,
    name: Type.String(),
    description: Type.String(),
    createdAt: Time,
    labels: Labels,
    versions: Type.Array(SkillVersion),
    evaluationCases: Type.Array(EvaluationCase),
  },
  closed,
);

const AgentVersion = Type.Object({ id: Id, version: VersionNumber, ...versionTimes, workflow: JsonObject }, closed);

const Agent = Type.Object(
  {
    id: Id,
    name: Type.String(),
    description: Type.String(),
    createdAt: Time,
    labels: Labels,
    versions: Type.Array(AgentVersion),
  },
  closed,
);

export const BundleSchema = Type.Object(
  {
    format: Type.Literal(BUNDLE_FORMAT),
    exportedAt: Type.Optional(Time),
    organization: Type.Optional(Type.Object({ id: Id, name: Type.String() }, closed)),
    tools: Type.Array(Tool),
    prompts: Type.Array(Prompt),
    skills: Type.Array(Skill),
    agents: Type.Array(Agent),
  },
  {
    ...closed,
    $id: "Bundle",
    title: "Kiln export bundle",
    description:
      "An organization's prompts, tools, skills and agents with every version, labels, published versions and evaluation cases (docs/bundles.md).",
  },
);

export type Bundle = Static<typeof BundleSchema>;
export type BundleTool = Static<typeof Tool>;
export type BundlePrompt = Static<typeof Prompt>;
export type BundleSkill = Static<typeof Skill>;
export type BundleAgent = Static<typeof Agent>;
export type BundleToolPin = Static<typeof ToolPin>;
export type BundleCase = Static<typeof EvaluationCase>;

/** What an import does with one thing of the bundle (docs/bundles.md "Import"). */
export type ImportOutcome = "created" | "updated" | "skipped" | "conflict";

export interface ImportItem {
  kind: "tool" | "prompt" | "skill" | "agent" | "evaluation_case";
  /** The id in the bundle. */
  sourceId: string;
  /** The id in the importing organization (new or existing); null for a conflict. */
  id: string | null;
  name: string;
  outcome: ImportOutcome;
  /** What changes (updated), or why it cannot (conflict). */
  detail?: string;
}
