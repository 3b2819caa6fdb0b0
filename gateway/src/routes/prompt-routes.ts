import { LIMITS } from "@kiln/kit/limits";
import Type from "typebox";
import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { Body, Nullable, OneOf } from "../schemas.js";
import {
  CacheTtlSeconds,
  ChangeMessage,
  Description,
  JsonObject,
  ModelId,
  Name,
  OrganizationId,
  optionalJsonTextMessage,
  PromptText,
  ToolSelectorBody,
  toolSelectors,
  withoutNulls,
} from "./catalog-requests.js";
import { fromCatalog, promptVersionView, promptView } from "./catalog-views.js";
import { PromptListQuerystring, promptListFilters, registerPromptFolderRoutes } from "./prompt-folder-routes.js";
import { byIdWrite, createWrite, registerVersionedRoutes } from "./versioned-routes.js";

/** Prompts and their immutable versions (api.md "Prompts"; docs/api.md "Stability": public beta). */
export function registerPromptRoutes(app: GatewayApp, deps: GatewayDeps): void {
  const { catalog } = deps.clients;
  registerVersionedRoutes(app, "Prompt", {
    view: promptView,
    versionView: fromCatalog.view("prompt version", promptVersionView),
    list: (request, options, query) => catalog.listPrompts({ ...request, ...promptListFilters(query) }, options),
    listQuerystring: PromptListQuerystring,
    afterList: (app) => registerPromptFolderRoutes(app, deps),
    create: createWrite({
      summary: "Create a prompt (it has no version yet)",
      body: Body({
        organizationId: OrganizationId,
        name: Name,
        description: Type.Optional(Description),
        defaultModel: Type.Optional(Nullable(ModelId)),
      }),
      call: ({ body: { organizationId, name, description, defaultModel } }, options) =>
        catalog.createPrompt(
          { organizationId, name, description: description ?? "", defaultModel: defaultModel ?? undefined },
          options,
        ),
    }),
    get: {
      summary:
        "A prompt with the version ?versionId= names (default: the published one, else the latest); ?partials=true: with what it includes now",
      querystring: Type.Object(
        {
          versionId: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
          partials: Type.Optional(
            OneOf(["true", "false"], {
              description: 'true: the version\'s partials as a run would render them now (api.md "Partials")',
            }),
          ),
        },
        { additionalProperties: false },
      ),
      call: (args, options, query) => catalog.getPrompt({ ...args, withPartials: query.partials === "true" }, options),
    },
    update: byIdWrite({
      summary: "Change a prompt's name, description or default model (null clears it)",
      body: Body({
        name: Type.Optional(Name),
        description: Type.Optional(Description),
        defaultModel: Type.Optional(Nullable(ModelId)),
      }),
      call: ({ id, body: { name, description, defaultModel } }, options) =>
        catalog.updatePrompt(
          { id, name, description, defaultModel: defaultModel ?? undefined, clearDefaultModel: defaultModel === null },
          options,
        ),
    }),
    createVersion: byIdWrite({
      summary: "Create an immutable draft version of a prompt",
      body: PromptVersionBody,
      call: (
        { id, body: { tools, variablesSchema, responseFormat, message, messages, systemPrompt, ...settings } },
        options,
      ) =>
        catalog.createPromptVersion(
          {
            promptId: id,
            message: message ?? "",
            content: {
              ...withoutNulls(settings),
              systemPrompt: systemPrompt ?? "",
              messages: (messages ?? []).map((m) => ({ role: m.role, content: m.content ?? "", name: m.name ?? "" })),
              variablesSchema: optionalJsonTextMessage(variablesSchema),
              responseFormat: optionalJsonTextMessage(responseFormat),
            },
            tools: toolSelectors(tools),
          },
          options,
        ),
    }),
    diff: ({ id, ...versions }, options) => catalog.diffPromptVersions({ promptId: id, ...versions }, options),
    publish: byIdWrite({
      summary: "Publish a draft version of the prompt; answers the prompt",
      body: Body({ versionId: Type.String({ minLength: 1, maxLength: 100 }) }),
      call: ({ id, body }, options) =>
        catalog.publishPromptVersion({ promptId: id, versionId: body.versionId }, options),
    }),
  });
}

/** One message of a chat version; the catalog checks role and fields, naming `messages[i].role`. */
const PromptMessageBody = Type.Object(
  {
    role: Type.String({ maxLength: 20, description: "system, developer, user, assistant or placeholder" }),
    content: Type.Optional(PromptText("Mustache template (not for a placeholder)")),
    name: Type.Optional(Type.String({ maxLength: 64, description: "a placeholder's name (only for a placeholder)" })),
  },
  { additionalProperties: false },
);

const PromptVersionBody = Body({
  systemPrompt: Type.Optional(
    PromptText("Mustache template; every {{placeholder}} must be declared. Required unless messages are given"),
  ),
  messages: Type.Optional(
    Type.Array(PromptMessageBody, {
      minItems: 1,
      maxItems: LIMITS.promptMessages,
      description: 'a chat version\'s template, instead of systemPrompt and developerPrompt (api.md "Chat prompts")',
    }),
  ),
  developerPrompt: Type.Optional(Nullable(PromptText("Mustache template, sent after the system prompt"))),
  variablesSchema: Type.Optional(
    JsonObject('a JSON Schema of type object; default {"type":"object"}', LIMITS.jsonSchemaBytes),
  ),
  responseFormat: Type.Optional(
    JsonObject('{"type":"text"} (default) or {"type":"json_schema","name"?,"schema"}', LIMITS.jsonSchemaBytes),
  ),
  temperature: Type.Optional(Nullable(Type.Number({ description: "0–2" }))),
  // Within the wire's int32; the catalog answers its own bound (1 to 128 000) on the field.
  maxOutputTokens: Type.Optional(
    Nullable(Type.Integer({ minimum: -2_147_483_648, maximum: 2_147_483_647, description: "1 to 128000" })),
  ),
  cacheTtlSeconds: Type.Optional(Nullable(CacheTtlSeconds(" (runs of the version); null or absent: none"))),
  model: Type.Optional(Nullable(ModelId)),
  tools: Type.Optional(Type.Array(ToolSelectorBody, { maxItems: LIMITS.toolsPerVersion })),
  message: Type.Optional(ChangeMessage),
});
