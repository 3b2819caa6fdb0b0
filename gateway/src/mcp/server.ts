import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListToolsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { GatewayClients } from "../http/gateway-app.js";
import { callerOf } from "./caller.js";
import { getPrompt, listPrompts } from "./prompts.js";
import { callTool, sessionTools } from "./tools.js";

const INSTRUCTIONS =
  "Kiln's managed prompts (prompts/get renders a published version) and its skills and agents as tools " +
  "(tools/call stores a run; its id is in the result's _meta under kiln/run).";

/** One MCP server (one per session): the organization's prompts, and its skills and agents as tools. */
export function createMcpServer(clients: GatewayClients): Server {
  const server = new Server(
    { name: "kiln", title: "Kiln", version: "1.0.0" },
    { capabilities: { prompts: {}, tools: {} }, instructions: INSTRUCTIONS },
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
    return callTool(clients, caller, await tools.find(caller, request.params.name), {
      name: request.params.name,
      arguments: request.params.arguments,
      idempotencyKey: typeof key === "string" ? key : headerOf(extra.requestInfo?.headers, "idempotency-key"),
      signal: extra.signal,
    });
  });
  return server;
}

function headerOf(headers: Record<string, string | string[] | undefined> | undefined, name: string) {
  const value = headers?.[name];
  return typeof value === "string" ? value : undefined;
}
