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

/** A chat version's message: a text role with `content`, or a placeholder with `name`. */
const PromptMessage = Type.Object(
  { role: Type.String(), content: Type.Optional(Type.String()), name: Type.Optional(Type.String()) },
  closed,
);

const PromptVersion = Type.Object(
  {
    id: Id,
    version: VersionNumber,
    ...versionTimes,
    systemPrompt: Type.String({ description: '"" for a chat version (one with messages)' }),
    messages: Type.Optional(
      Type.Array(PromptMessage, { description: 'a chat version\'s template (api.md "Chat prompts")' }),
    ),
    developerPrompt: Nullable(Type.String()),
    variablesSchema: JsonObject,
    responseFormat: JsonObject,
    temperature: Nullable(Type.Number()),
    maxOutputTokens: Nullable(Type.Integer()),
    cacheTtlSeconds: Type.Optional(
      Nullable(Type.Integer({ description: 'the response cache\'s default TTL (docs/cache.md "Defaults")' })),
    ),
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

/**
 * The evaluation cases of an import as the gateway hands them to the evaluation service: each with
 * the skill it lands on here (what the catalog's import said) and its place in the bundle.
 */
export const CasesToImportSchema = Type.Array(
  Type.Object(
    {
      skillId: Id,
      /** The skill is new in this import: a dry run cannot look it up yet. */
      skillCreated: Type.Boolean(),
      /** `skills[2].evaluationCases[0]`, for error details. */
      field: Type.String(),
      case: EvaluationCase,
    },
    closed,
  ),
);
export type CaseToImport = Static<typeof CasesToImportSchema>[number];
export type BundleTool = Static<typeof Tool>;
export type BundlePrompt = Static<typeof Prompt>;
export type BundleSkill = Static<typeof Skill>;
export type BundleAgent = Static<typeof Agent>;
export type BundleToolPin = Static<typeof ToolPin>;
export type BundleCase = Static<typeof EvaluationCase>;

/** A closed set of strings, typed as their union (as the gateway's OneOf). */
const Enum = <const V extends readonly string[]>(values: V) =>
  Type.Unsafe<V[number]>({ type: "string", enum: [...values] });

export const IMPORT_ITEM_KINDS = ["tool", "prompt", "skill", "agent", "evaluation_case"] as const;
export const IMPORT_OUTCOMES = ["created", "updated", "skipped", "conflict"] as const;

/** What an import does with one thing of the bundle (docs/bundles.md "Import"): one line of its report. */
export const ImportItemSchema = Type.Object(
  {
    kind: Enum(IMPORT_ITEM_KINDS),
    sourceId: Type.String({ description: "the id in the bundle" }),
    id: Nullable(
      Type.String({
        description:
          "the id here (new or existing); null for a conflict, and for what a dry run would create (its id is assigned at import)",
      }),
    ),
    name: Type.String(),
    outcome: Enum(IMPORT_OUTCOMES),
    detail: Type.Optional(Type.String({ description: "what changes (updated) or why it cannot (conflict)" })),
  },
  { $id: "ImportItem" },
);
export type ImportItem = Static<typeof ImportItemSchema>;
