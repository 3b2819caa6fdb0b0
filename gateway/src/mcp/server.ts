import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { GatewayClients } from "../http/gateway-app.js";
import { callerOf } from "./caller.js";
import { progressHeartbeat } from "./progress.js";
import { getPrompt, listPrompts } from "./prompts.js";
import { listResources, listResourceTemplates, readResource } from "./resources.js";
import { callTool, sessionTools } from "./tools.js";

const INSTRUCTIONS =
  "Kiln's managed prompts (prompts/get renders a published version) and its skills and agents as tools " +
  "(tools/call stores a run; its id is in the result's _meta under kiln/run), and stored runs and " +
  "evaluation runs as resources (kiln://runs/{id}).";

/** One MCP server (one per session): the organization's prompts, and its skills and agents as tools. */
export function createMcpServer(clients: GatewayClients, options: { listChanged: boolean }): Server {
  const { listChanged } = options;
  const server = new Server(
    { name: "kiln", title: "Kiln", version: "1.0.0" },
    { capabilities: { prompts: { listChanged }, tools: { listChanged }, resources: {} }, instructions: INSTRUCTIONS },
  );
  server.setRequestHandler(ListPromptsRequestSchema, (_request, extra) =>
    listPrompts(clients.catalog, callerOf(extra)),
  );
  server.setRequestHandler(GetPromptRequestSchema, (request, extra) =>
    getPrompt(clients.catalog, callerOf(extra), request.params.name, request.params.arguments ?? {}),
  );
  const tools = sessionTools(clients);
  server.setRequestHandler(ListToolsRequestSchema, (_request, extra) => tools.list(callerOf(extra)));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const key = request.params._meta?.["kiln/idempotencyKey"];
    const caller = callerOf(extra);
    const offered = await tools.find(caller, request.params.name);
    const progress = progressHeartbeat(request.params._meta?.progressToken, extra.sendNotification);
    try {
      return await callTool(clients, caller, offered, {
        name: request.params.name,
        arguments: request.params.arguments,
        idempotencyKey: typeof key === "string" ? key : headerOf(extra.requestInfo?.headers, "idempotency-key"),
        signal: extra.signal,
      });
    } finally {
      progress.stop();
    }
  });
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => listResourceTemplates());
  server.setRequestHandler(ListResourcesRequestSchema, (_request, extra) => listResources(clients, callerOf(extra)));
  server.setRequestHandler(ReadResourceRequestSchema, (request, extra) =>
    readResource(clients, callerOf(extra), request.params.uri),
  );
  return server;
}

function headerOf(headers: Record<string, string | string[] | undefined> | undefined, name: string) {
  const value = headers?.[name];
  return typeof value === "string" ? value : undefined;
}
