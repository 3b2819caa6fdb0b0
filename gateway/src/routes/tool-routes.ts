import { LIMITS } from "@kiln/kit/limits";
import Type from "typebox";
import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { Body, OneOf } from "../schemas.js";
import {
  ChangeMessage,
  Description,
  JsonObject,
  jsonTextMessage,
  Name,
  OrganizationId,
  optionalJsonTextMessage,
} from "./catalog-requests.js";
import { toolVersionView, toolView } from "./catalog-views.js";
import { changeMetadata } from "./versioned-bodies.js";
import { byIdWrite, createWrite, registerVersionedRoutes } from "./versioned-routes.js";

const ToolType = OneOf(["manual_stub", "http"]);
const ToolConfig = JsonObject(
  'manual_stub: {"result": {...}}; http: {"url", "method": "GET" | "POST", "headers"?, "timeoutMs"? (≤ 10000)}',
  LIMITS.toolConfigBytes,
);
const InputSchema = JsonObject("a JSON Schema of type object describing the tool input", LIMITS.jsonSchemaBytes);

/** Tools and their versions (api.md "Tools", "Version diffs"; docs/api.md "Stability": public beta). */
export function registerToolRoutes(app: GatewayApp, deps: GatewayDeps): void {
  const { catalog } = deps.clients;
  registerVersionedRoutes(app, "Tool", {
    view: toolView,
    versionView: toolVersionView,
    list: catalog.listTools,
    create: createWrite({
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
      call: ({ body: b }, options) =>
        catalog.createTool(
          {
            organizationId: b.organizationId,
            toolKey: b.toolKey,
            name: b.name,
            description: b.description ?? "",
            content: { type: b.type, config: jsonTextMessage(b.config), inputSchema: jsonTextMessage(b.inputSchema) },
          },
          options,
        ),
    }),
    get: {
      summary: "A tool with its current version's type, config and input schema",
      querystring: Type.Object({}, { additionalProperties: false }),
      call: ({ id }, options) => catalog.getTool({ id }, options),
    },
    update: changeMetadata(
      "Change a tool's name or description (metadata lives on the tool, not on versions)",
      catalog.updateTool,
    ),
    createVersion: byIdWrite({
      summary: "Create a tool version (a full snapshot: omitted fields are copied) that becomes current",
      body: Body({
        type: Type.Optional(ToolType),
        config: Type.Optional(ToolConfig),
        inputSchema: Type.Optional(InputSchema),
        message: Type.Optional(ChangeMessage),
      }),
      call: ({ id, body: b }, options) =>
        catalog.createToolVersion(
          {
            toolId: id,
            message: b.message ?? "",
            content: {
              type: b.type,
              config: optionalJsonTextMessage(b.config),
              inputSchema: optionalJsonTextMessage(b.inputSchema),
            },
          },
          options,
        ),
    }),
    diff: ({ id, ...versions }, options) => catalog.diffToolVersions({ toolId: id, ...versions }, options),
  });
}
