import { LIMITS } from "@kiln/kit/limits";
import Type from "typebox";
import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { rpcOptions } from "../http/request.js";
import { Body, errorResponses, List, Nullable, ref } from "../schemas.js";
import {
  Description,
  IdParams,
  JsonObject,
  jsonText,
  ListQuerystring,
  listRequest,
  ModelId,
  Name,
  OrganizationId,
  PromptText,
  ToolSelectorBody,
  toolSelectors,
  VersionIdQuerystring,
} from "./catalog-requests.js";
import { PromptVersionView, PromptView, promptVersionView, promptView } from "./catalog-views.js";

const tags = ["prompts"];
const config = { stability: "beta" as const };

/** Prompts and their immutable versions (api.md "Prompts"; spec §9: public beta). */
export function registerPromptRoutes(app: GatewayApp, deps: GatewayDeps): void {
  const { catalog } = deps.clients;

  app.get(
    "/api/prompts",
    {
      config,
      schema: {
        tags,
        operationId: "listPrompts",
        summary: "List an organization's prompts, newest first",
        querystring: ListQuerystring,
        response: { 200: List(ref(PromptView)), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const r = await catalog.listPrompts(listRequest(request, request.query), rpcOptions(request));
      return { data: r.prompts.map(promptView), nextCursor: r.nextCursor || null };
    },
  );

  app.post(
    "/api/prompts",
    {
      config,
      schema: {
        tags,
        operationId: "createPrompt",
        summary: "Create a prompt (it has no version yet)",
        body: Body({
          organizationId: OrganizationId,
          name: Name,
          description: Type.Optional(Description),
          defaultModel: Type.Optional(Nullable(ModelId)),
        }),
        response: { 201: ref(PromptView), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const { organizationId, name, description, defaultModel } = request.body;
      const r = await catalog.createPrompt(
        { organizationId, name, description: description ?? "", defaultModel: defaultModel ?? undefined },
        rpcOptions(request),
      );
      return reply.code(201).send(promptView(r.prompt));
    },
  );

  app.get(
    "/api/prompts/:id",
    {
      config,
      schema: {
        tags,
        operationId: "getPrompt",
        summary: "A prompt with the version ?versionId= names (default: the published one, else the latest)",
        params: IdParams,
        querystring: VersionIdQuerystring,
        response: { 200: ref(PromptView), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const r = await catalog.getPrompt(
        { id: request.params.id, versionId: request.query.versionId ?? "" },
        rpcOptions(request),
      );
      return promptView(r.prompt);
    },
  );

  app.patch(
    "/api/prompts/:id",
    {
      config,
      schema: {
        tags,
        operationId: "updatePrompt",
        summary: "Change a prompt's name, description or default model (null clears it)",
        params: IdParams,
        body: Body({
          name: Type.Optional(Name),
          description: Type.Optional(Description),
          defaultModel: Type.Optional(Nullable(ModelId)),
        }),
        response: { 200: ref(PromptView), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const { name, description, defaultModel } = request.body;
      const r = await catalog.updatePrompt(
        {
          id: request.params.id,
          name,
          description,
          defaultModel: defaultModel ?? undefined,
          clearDefaultModel: defaultModel === null,
        },
        rpcOptions(request),
      );
      return promptView(r.prompt);
    },
  );

  app.post(
    "/api/prompts/:id/versions",
    {
      config,
      schema: {
        tags,
        operationId: "createPromptVersion",
        summary: "Create an immutable draft version of a prompt",
        params: IdParams,
        body: Body({
          systemPrompt: PromptText("Mustache template; every {{placeholder}} must be declared"),
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
          model: Type.Optional(Nullable(ModelId)),
          tools: Type.Optional(Type.Array(ToolSelectorBody, { maxItems: LIMITS.toolsPerVersion })),
        }),
        response: { 201: ref(PromptVersionView), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const b = request.body;
      const r = await catalog.createPromptVersion(
        {
          promptId: request.params.id,
          systemPrompt: b.systemPrompt,
          developerPrompt: b.developerPrompt ?? undefined,
          variablesSchemaJson: jsonText(b.variablesSchema),
          responseFormatJson: jsonText(b.responseFormat),
          temperature: b.temperature ?? undefined,
          maxOutputTokens: b.maxOutputTokens ?? undefined,
          model: b.model ?? undefined,
          tools: toolSelectors(b.tools),
        },
        rpcOptions(request),
      );
      if (!r.version) throw new Error("catalog returned no prompt version");
      return reply.code(201).send(promptVersionView(r.version));
    },
  );

  app.post(
    "/api/prompts/:id/publish",
    {
      config,
      schema: {
        tags,
        operationId: "publishPromptVersion",
        summary: "Publish a draft version of the prompt; answers the prompt",
        params: IdParams,
        body: Body({ versionId: Type.String({ minLength: 1, maxLength: 100 }) }),
        response: { 200: ref(PromptView), ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request) => {
      const r = await catalog.publishPromptVersion(
        { promptId: request.params.id, versionId: request.body.versionId },
        rpcOptions(request),
      );
      return promptView(r.prompt);
    },
  );
}
