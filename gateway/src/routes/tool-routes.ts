import { LIMITS } from "@kiln/kit/limits";
import Type from "typebox";
import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { Body, OneOf } from "../schemas.js";
import {
  Description,
  JsonObject,
  jsonTextMessage,
  Name,
  OrganizationId,
  optionalJsonTextMessage,
} from "./catalog-requests.js";
import { ToolVersionView, ToolView, toolVersionView, toolView } from "./catalog-views.js";
import { MetadataBody } from "./versioned-bodies.js";
import { registerVersionedRoutes } from "./versioned-routes.js";

const ToolType = OneOf(["manual_stub", "http"]);
const ToolConfig = JsonObject(
  'manual_stub: {"result": {...}}; http: {"url", "method": "GET" | "POST", "headers"?, "timeoutMs"? (≤ 10000)}',
  LIMITS.toolConfigBytes,
);
const InputSchema = JsonObject("a JSON Schema of type object describing the tool input", LIMITS.jsonSchemaBytes);

/** Tools and their versions (api.md "Tools", "Version diffs"; docs/api.md "Stability": public beta). */
export function registerToolRoutes(app: GatewayApp, deps: GatewayDeps): void {
  const { catalog } = deps.clients;
  registerVersionedRoutes(app, {
    path: "/api/tools",
    tag: "tools",
    name: "Tool",
    view: ToolView,
    versionView: ToolVersionView,
    list: async (request, options) => {
      const r = await catalog.listTools(request, options);
      return { data: r.tools.map(toolView), nextCursor: r.nextCursor };
    },
    create: {
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
      conflicts: true,
      call: async ({ body: b }, options) => {
        const r = await catalog.createTool(
          {
            organizationId: b.organizationId,
            toolKey: b.toolKey,
            name: b.name,
            description: b.description ?? "",
            content: { type: b.type, config: jsonTextMessage(b.config), inputSchema: jsonTextMessage(b.inputSchema) },
          },
          options,
        );
        return toolView(r.tool);
      },
    },
    get: {
      summary: "A tool with its current version's type, config and input schema",
      querystring: Type.Object({}, { additionalProperties: false }),
      call: async ({ id }, options) => toolView((await catalog.getTool({ id }, options)).tool),
    },
    update: {
      summary: "Change a tool's name or description (metadata lives on the tool, not on versions)",
      body: MetadataBody,
      call: async ({ id, body }, options) =>
        toolView((await catalog.updateTool({ id, name: body.name, description: body.description }, options)).tool),
    },
    createVersion: {
      summary: "Create a tool version (a full snapshot: omitted fields are copied) that becomes current",
      body: Body({
        type: Type.Optional(ToolType),
        config: Type.Optional(ToolConfig),
        inputSchema: Type.Optional(InputSchema),
      }),
      call: async ({ id, body: b }, options) => {
        const r = await catalog.createToolVersion(
          {
            toolId: id,
            content: {
              type: b.type,
              config: optionalJsonTextMessage(b.config),
              inputSchema: optionalJsonTextMessage(b.inputSchema),
            },
          },
          options,
        );
        return toolVersionView(r.version);
      },
    },
    diff: async ({ id, versionId, againstVersionId }, options) =>
      (await catalog.diffToolVersions({ toolId: id, versionId, againstVersionId }, options)).diff,
  });
}
