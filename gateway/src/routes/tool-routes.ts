import { LIMITS } from "@kiln/kit/limits";
import Type from "typebox";
import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { rpcOptions } from "../http/request.js";
import { jsonTextOf } from "../json-limits.js";
import { Body, errorResponses, List, OneOf, ref } from "../schemas.js";
import {
  Description,
  DiffQuerystring,
  IdParams,
  JsonObject,
  jsonText,
  ListQuerystring,
  listRequest,
  Name,
  OrganizationId,
  VersionParams,
} from "./catalog-requests.js";
import {
  ToolVersionView,
  ToolView,
  toolVersionView,
  toolView,
  VersionDiffView,
  versionDiffView,
} from "./catalog-views.js";

const tags = ["tools"];
const config = { stability: "beta" as const };

const ToolType = OneOf(["manual_stub", "http"]);
const ToolConfig = JsonObject(
  'manual_stub: {"result": {...}}; http: {"url", "method": "GET" | "POST", "headers"?, "timeoutMs"? (≤ 10000)}',
  LIMITS.toolConfigBytes,
);
const InputSchema = JsonObject("a JSON Schema of type object describing the tool input", LIMITS.jsonSchemaBytes);

/** Tools and their versions (api.md "Tools", "Version diffs"; spec §9: public beta). */
export function registerToolRoutes(app: GatewayApp, deps: GatewayDeps): void {
  const { catalog } = deps.clients;

  app.get(
    "/api/tools",
    {
      config,
      schema: {
        tags,
        operationId: "listTools",
        summary: "List an organization's tools, newest first",
        querystring: ListQuerystring,
        response: { 200: List(ref(ToolView)), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const r = await catalog.listTools(listRequest(request, request.query), rpcOptions(request));
      return { data: r.tools.map(toolView), nextCursor: r.nextCursor || null };
    },
  );

  app.post(
    "/api/tools",
    {
      config,
      schema: {
        tags,
        operationId: "createTool",
        summary: "Create a tool with its version 1",
        body: Body({
          organizationId: OrganizationId,
          toolKey: Type.String({ pattern: "^[a-zA-Z0-9_-]{1,64}$", description: "unique per organization" }),
          name: Name,
          type: ToolType,
          config: ToolConfig,
          inputSchema: InputSchema,
          description: Type.Optional(Description),
        }),
        response: { 201: ref(ToolView), ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request, reply) => {
      const b = request.body;
      const r = await catalog.createTool(
        {
          organizationId: b.organizationId,
          toolKey: b.toolKey,
          name: b.name,
          description: b.description ?? "",
          type: b.type,
          configJson: jsonTextOf(b.config),
          inputSchemaJson: jsonTextOf(b.inputSchema),
        },
        rpcOptions(request),
      );
      return reply.code(201).send(toolView(r.tool));
    },
  );

  app.get(
    "/api/tools/:id",
    {
      config,
      schema: {
        tags,
        operationId: "getTool",
        summary: "A tool with its current version's type, config and input schema",
        params: IdParams,
        querystring: Type.Object({}, { additionalProperties: false }),
        response: { 200: ref(ToolView), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const r = await catalog.getTool({ id: request.params.id }, rpcOptions(request));
      return toolView(r.tool);
    },
  );

  app.patch(
    "/api/tools/:id",
    {
      config,
      schema: {
        tags,
        operationId: "updateTool",
        summary: "Change a tool's name or description (metadata lives on the tool, not on versions)",
        params: IdParams,
        body: Body({ name: Type.Optional(Name), description: Type.Optional(Description) }),
        response: { 200: ref(ToolView), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const { name, description } = request.body;
      const r = await catalog.updateTool({ id: request.params.id, name, description }, rpcOptions(request));
      return toolView(r.tool);
    },
  );

  app.post(
    "/api/tools/:id/versions",
    {
      config,
      schema: {
        tags,
        operationId: "createToolVersion",
        summary: "Create a tool version (a full snapshot: omitted fields are copied) that becomes current",
        params: IdParams,
        body: Body({
          type: Type.Optional(ToolType),
          config: Type.Optional(ToolConfig),
          inputSchema: Type.Optional(InputSchema),
        }),
        response: { 201: ref(ToolVersionView), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const b = request.body;
      const r = await catalog.createToolVersion(
        {
          toolId: request.params.id,
          type: b.type,
          configJson: jsonText(b.config),
          inputSchemaJson: jsonText(b.inputSchema),
        },
        rpcOptions(request),
      );
      return reply.code(201).send(toolVersionView(r.version));
    },
  );

  app.get(
    "/api/tools/:id/versions/:versionId/diff",
    {
      config,
      schema: {
        tags,
        operationId: "diffToolVersions",
        summary: "The changes from ?against= (default: the version before) to this tool version",
        params: VersionParams,
        querystring: DiffQuerystring,
        response: { 200: ref(VersionDiffView), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const r = await catalog.diffToolVersions(
        {
          toolId: request.params.id,
          versionId: request.params.versionId,
          againstVersionId: request.query.against ?? "",
        },
        rpcOptions(request),
      );
      return versionDiffView(r.diff);
    },
  );
}
