import type {
  Change,
  Prompt,
  PromptContent,
  PromptVersion,
  Tool,
  ToolContent,
  ToolRef,
  ToolVersion,
  VersionDiff,
} from "@kiln/proto/catalog";
import Type, { type Static } from "typebox";
import { Nullable, OneOf, ref, Timestamp } from "../schemas.js";
import {
  PromptIncludeView,
  PromptPartialFields,
  promptIncludeView,
  promptPartialsView,
} from "./prompt-partial-views.js";
import {
  Authorship,
  authorshipOf,
  OptionalVersionId,
  resourceShape,
  timestampOf,
  VersionSummaries,
  versionShape,
  versionSummaryView,
} from "./versioned-views.js";
import { answersOf } from "./views.js";

/**
 * Catalog proto messages → REST JSON (api.md "Prompts", "Tools", "Version diffs", "Skills"), with
 * their response schemas beside them.
 *
 * Free-form user JSON (schemas, tool config, bindings, diff values) travels as the RPC's
 * `kiln.common.v1.JsonText` and is parsed here; each family's content message (PromptContent,
 * ToolContent, SkillContent) is read by one function, whichever message carries it. Responses are written with JSON.stringify (app.ts), so
 * no key is stripped, renamed or reordered, whatever its name (`$ref`, `a.b`, `__proto__`); the
 * response schemas describe the shapes for the OpenAPI document and its conformance test.
 */

/** Any JSON value, returned as it is. */
export const FreeJson = Type.Unknown({ description: "free-form JSON, returned exactly as stored" });

/** A JSON Schema written by a user (any keywords). */
export const JsonSchemaView = Type.Unsafe<Record<string, unknown>>({
  type: "object",
  additionalProperties: true,
  description: "a JSON Schema, returned exactly as stored",
});

/** `responseFormat` of a prompt version, as the catalog accepts it. */
export const ResponseFormatView = Type.Union(
  [
    Type.Object({ type: Type.Literal("text") }, { additionalProperties: false }),
    Type.Object(
      { type: Type.Literal("json_schema"), name: Type.Optional(Type.String()), schema: JsonSchemaView },
      { additionalProperties: false },
    ),
  ],
  { $id: "ResponseFormat" },
);

/** A tool's `config`, as the catalog accepts it for each tool type (api.md "Tools"). */
export const ToolConfigView = Type.Union(
  [
    Type.Object(
      { result: Type.Record(Type.String(), Type.Unknown(), { description: "returned as the tool output" }) },
      { additionalProperties: false, title: "ManualStubConfig", description: "manual_stub" },
    ),
    Type.Object(
      {
        url: Type.String({ description: "its host must be on the deployment's allowlist" }),
        method: OneOf(["GET", "POST"]),
        headers: Type.Optional(Type.Record(Type.String(), Type.String())),
        timeoutMs: Type.Optional(Type.Integer({ maximum: 10_000 })),
      },
      { additionalProperties: false, title: "HttpToolConfig", description: "http" },
    ),
  ],
  { $id: "ToolConfig" },
);

/** JSON text of an RPC JsonText → its value (JSON.parse keeps "__proto__" an own key); null when unset. */
export function parseJson(text: string | undefined): unknown {
  return text === undefined || text === "" ? null : JSON.parse(text);
}

type ToolConfig = Static<typeof ToolConfigView>;

/** The catalog's answers: the message a response always carries, or an error naming it. */
export const fromCatalog = answersOf("catalog");

export const ToolRefView = Type.Object(
  { toolId: Type.String(), toolVersionId: Type.String(), toolKey: Type.String() },
  { $id: "ToolRef" },
);
export const toolRefView = (t: ToolRef) => ({ toolId: t.toolId, toolVersionId: t.toolVersionId, toolKey: t.toolKey });

export const PromptMessageView = Type.Union(
  [
    Type.Object(
      { role: OneOf(["system", "developer", "user", "assistant"]), content: Type.String() },
      { additionalProperties: false },
    ),
    Type.Object({ role: Type.Literal("placeholder"), name: Type.String() }, { additionalProperties: false }),
  ],
  { $id: "PromptMessage" },
);
type PromptMessageJson = Static<typeof PromptMessageView>;
const promptMessageView = (m: { role: string; content: string; name: string }): PromptMessageJson =>
  m.role === "placeholder" ? { role: "placeholder", name: m.name } : { role: m.role as "system", content: m.content };

export const PromptVersionView = versionShape.schema(
  { promptId: Type.String(), organizationId: Type.String() },
  {
    messages: Type.Array(ref(PromptMessageView), {
      description: "the version's template; built from systemPrompt and developerPrompt for a version made from them",
    }),
    chat: Type.Boolean({ description: 'true: created with messages (systemPrompt is then "", developerPrompt null)' }),
    systemPrompt: Type.String({ description: 'as created; "" for a version created with messages' }),
    developerPrompt: Nullable(Type.String()),
    variablesSchema: JsonSchemaView,
    responseFormat: ref(ResponseFormatView),
    temperature: Nullable(Type.Number()),
    maxOutputTokens: Nullable(Type.Integer()),
    cacheTtlSeconds: Nullable(
      Type.Integer({
        description:
          'the response cache\'s default TTL for runs of the version, in seconds (docs/cache.md "Defaults"); null: none',
      }),
    ),
    model: Nullable(Type.String({ description: "fixed at creation: the request's, else the prompt's default" })),
    tools: Type.Array(ref(ToolRefView)),
    includes: Type.Array(ref(PromptIncludeView), {
      description:
        'the prompts its templates include ({{> name}}, {{> name@label}}; api.md "Partials"), each once, in order of appearance',
    }),
  },
  { $id: "PromptVersion" },
  Type.Integer({ description: "1, 2, …" }),
);
/** A prompt version's content, as the version's fields. */
const promptContentView = (c: PromptContent | undefined) => ({
  messages: (c?.messages ?? []).map(promptMessageView),
  chat: c?.chat ?? false,
  systemPrompt: c?.systemPrompt ?? "",
  developerPrompt: c?.developerPrompt ?? null,
  variablesSchema: parseJson(c?.variablesSchema?.json) as Record<string, unknown>,
  responseFormat: parseJson(c?.responseFormat?.json) as Static<typeof ResponseFormatView>,
  temperature: c?.temperature ?? null,
  maxOutputTokens: c?.maxOutputTokens ?? null,
  cacheTtlSeconds: c?.cacheTtlSeconds ?? null,
  model: c?.model ?? null,
});

export const promptVersionView = (v: PromptVersion) =>
  versionShape.view(
    v,
    { promptId: v.promptId, organizationId: v.organizationId },
    {
      ...promptContentView(v.content),
      tools: v.tools.map(toolRefView),
      includes: v.includes.map(promptIncludeView),
    },
  );

export const PromptView = resourceShape.schema(
  {
    defaultModel: Nullable(Type.String()),
    publishedVersionId: OptionalVersionId,
    latestVersion: Type.Integer({ description: "0 when the prompt has no version" }),
    versions: VersionSummaries,
    version: Nullable(ref(PromptVersionView)),
  },
  PromptPartialFields,
  { $id: "Prompt" },
);
export const promptView = fromCatalog.view("prompt", (p: Prompt) =>
  resourceShape.view(
    p,
    {
      defaultModel: p.defaultModel ?? null,
      publishedVersionId: p.publishedVersionId || null,
      latestVersion: p.latestVersion,
      versions: p.versions.map(versionSummaryView),
      version: p.version ? promptVersionView(p.version) : null,
    },
    promptPartialsView(p),
  ),
);

const ToolType = OneOf(["manual_stub", "http"]);
const toolType = (t: string | undefined) => (t ?? "") as "manual_stub" | "http";

/** A tool version's content, as the fields of the tool or version that carries it. */
const toolContentView = (c: ToolContent | undefined) => ({
  type: toolType(c?.type),
  config: parseJson(c?.config?.json) as ToolConfig,
  inputSchema: parseJson(c?.inputSchema?.json) as Record<string, unknown>,
});

export const ToolView = Type.Object(
  {
    id: Type.String(),
    organizationId: Type.String(),
    toolKey: Type.String(),
    name: Type.String(),
    description: Type.String(),
    type: ToolType,
    currentVersionId: Type.String(),
    latestVersion: Type.Integer(),
    config: ref(ToolConfigView),
    inputSchema: JsonSchemaView,
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: "Tool" },
);
export const toolView = fromCatalog.view("tool", (t: Tool) => {
  const content = toolContentView(t.content);
  return {
    id: t.id,
    organizationId: t.organizationId,
    toolKey: t.toolKey,
    name: t.name,
    description: t.description,
    type: content.type,
    currentVersionId: t.currentVersionId,
    latestVersion: t.latestVersion,
    config: content.config,
    inputSchema: content.inputSchema,
    createdAt: timestampOf(t.createdAt),
    updatedAt: timestampOf(t.updatedAt),
  };
});

export const ToolVersionView = Type.Object(
  {
    id: Type.String(),
    toolId: Type.String(),
    version: Type.Integer(),
    type: ToolType,
    config: ref(ToolConfigView),
    inputSchema: JsonSchemaView,
    createdAt: Timestamp,
    ...Authorship,
  },
  { $id: "ToolVersion" },
);
export const toolVersionView = fromCatalog.view("tool version", (v: ToolVersion) => ({
  id: v.id,
  toolId: v.toolId,
  version: v.version,
  ...toolContentView(v.content),
  createdAt: timestampOf(v.createdAt),
  ...authorshipOf(v),
}));

export const VersionRefView = Type.Object({ versionId: Type.String(), version: Type.Integer() }, { $id: "VersionRef" });

export const VersionDiffView = Type.Object(
  {
    from: Nullable(ref(VersionRefView)),
    to: ref(VersionRefView),
    changes: Type.Array(
      Type.Object({
        op: OneOf(["add", "remove", "replace"]),
        path: Type.String({ description: 'RFC 6901 JSON Pointer, e.g. "/config/result/city"' }),
        before: Type.Optional(FreeJson),
        after: Type.Optional(FreeJson),
      }),
    ),
    summary: Type.String(),
  },
  { $id: "VersionDiff" },
);
const changeView = (c: Change) => ({
  op: c.op as "add" | "remove" | "replace",
  path: c.path,
  ...(c.before === undefined ? {} : { before: parseJson(c.before.json) }),
  ...(c.after === undefined ? {} : { after: parseJson(c.after.json) }),
});
export const versionDiffView = (d: VersionDiff | undefined) => {
  if (!d?.to) throw new Error("catalog returned no diff");
  return {
    from: d.from ? { versionId: d.from.versionId, version: d.from.version } : null,
    to: { versionId: d.to.versionId, version: d.to.version },
    changes: d.changes.map(changeView),
    summary: d.summary,
  };
};
