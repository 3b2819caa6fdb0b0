/**
 * A prompt version's content as REST carries it (api.md "Prompts"): the body of a version's
 * creation, and the `draft` of a run of an unsaved version (api.md "Runs"), read into the catalog's
 * PromptContent and tool selectors alike.
 */
import { LIMITS } from "@kiln/kit/limits";
import Type, { type Static } from "typebox";
import { Nullable } from "../schemas.js";
import {
  CacheTtlSeconds,
  JsonObject,
  ModelId,
  optionalJsonTextMessage,
  PromptText,
  ToolSelectorBody,
  toolSelectors,
  withoutNulls,
} from "./catalog-requests.js";

/** One message of a chat version; the catalog checks role and fields, naming `messages[i].role`. */
const PromptMessageBody = Type.Object(
  {
    role: Type.String({ maxLength: 20, description: "system, developer, user, assistant or placeholder" }),
    content: Type.Optional(PromptText("Mustache template (not for a placeholder)")),
    name: Type.Optional(Type.String({ maxLength: 64, description: "a placeholder's name (only for a placeholder)" })),
  },
  { additionalProperties: false },
);

/** The fields of a version's content: what creating a version, or running one unsaved, sends. */
export const PromptContentFields = {
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
};

/** A version's content, unsaved: the `draft` of a prompt run. */
export const PromptDraftBody = Type.Object(PromptContentFields, {
  additionalProperties: false,
  $id: "PromptDraft",
  description:
    'an unsaved version of the prompt to run instead of a stored one (not with versionId or label), as POST /api/prompts/{id}/versions takes it: checked as a version is, stored nowhere; the run keeps it in input.draft (api.md "Runs")',
});

type PromptContentBody = Static<typeof PromptDraftBody>;

/** The content and tools of a version's body, as the catalog's PromptContent and ToolSelectors. */
export function promptContentOf({
  tools,
  variablesSchema,
  responseFormat,
  messages,
  systemPrompt,
  ...settings
}: PromptContentBody) {
  return {
    content: {
      ...withoutNulls(settings),
      systemPrompt: systemPrompt ?? "",
      messages: (messages ?? []).map((m) => ({ role: m.role, content: m.content ?? "", name: m.name ?? "" })),
      variablesSchema: optionalJsonTextMessage(variablesSchema),
      responseFormat: optionalJsonTextMessage(responseFormat),
    },
    tools: toolSelectors(tools),
  };
}
