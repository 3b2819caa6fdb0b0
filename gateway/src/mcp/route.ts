import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import type { FastifyReply, FastifyRequest } from "fastify";
import { HttpError } from "../errors.js";
import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { principalOf } from "../http/request.js";
import { authInfoOf, type McpCaller } from "./caller.js";
import { listenToCatalogChanges } from "./changes.js";
import { createMcpServer } from "./server.js";
import { MAX_SESSIONS, mcpSessions } from "./sessions.js";

const SESSION_HEADER = "mcp-session-id";
const MAX_LABELS = 10;

/** A JSON-RPC error answered over HTTP (no request id: the message was not taken). */
function rpcError(reply: FastifyReply, status: number, code: number, message: string) {
  return reply.code(status).type("application/json").send({ jsonrpc: "2.0", error: { code, message }, id: null });
}

/** The caller of an MCP HTTP request: an API key (access tokens name no organization for MCP to serve). */
function callerOfRequest(request: FastifyRequest): McpCaller {
  const principal = principalOf(request);
  if (principal.type !== "api_key") {
    throw new HttpError("permission_denied", "the MCP endpoint takes an API key: send Authorization: Bearer <API key>");
  }
  const labels = (request.query as { labels?: unknown }).labels;
  const promptLabels = typeof labels === "string" ? labels.split(",").filter((l) => l !== "") : [];
  return { principal, requestId: request.id, promptLabels: promptLabels.slice(0, MAX_LABELS) };
}

/**
 * Kiln as an MCP server (docs/mcp.md): the Streamable HTTP transport at /mcp. Authentication is
 * the gateway's own (the onRequest hook, as for every REST route); the API key's scopes decide what
 * is listed and callable; a session belongs to the key that opened it. Browsers' cross-origin
 * requests are refused unless their Origin is in `allowedOrigins`.
 */
export function registerMcpRoute(app: GatewayApp, deps: GatewayDeps, allowedOrigins: string[] = []): void {
  const { bus } = deps;
  const sessions = mcpSessions(() => createMcpServer(deps.clients, { listChanged: bus !== undefined }));
  const changes = bus && listenToCatalogChanges(bus, deps.logger, sessions.notify);
  app.addHook("onClose", async () => {
    await changes?.stop();
    await sessions.closeAll();
  });

  app.route({
    method: ["GET", "POST", "DELETE"],
    url: "/mcp",
    schema: { hide: true },
    handler: async (request, reply) => {
      const origin = request.headers.origin;
      if (origin !== undefined && !allowedOrigins.includes(origin)) {
        throw new HttpError("permission_denied", `requests from the origin ${origin} are not allowed`);
      }
      const caller = callerOfRequest(request);
      // JSON-RPC 2.0: an empty batch is an Invalid Request, answered with one error (the SDK took it as nothing to do).
      if (request.method === "POST" && Array.isArray(request.body) && request.body.length === 0) {
        return rpcError(reply, 400, -32600, "Invalid Request: an empty batch");
      }
      const sessionId = request.headers[SESSION_HEADER];
      let session = typeof sessionId === "string" ? sessions.find(sessionId, caller.principal.id) : undefined;
      if (typeof sessionId === "string" && !session) return rpcError(reply, 404, -32001, "Session not found");
      if (!session) {
        if (request.method !== "POST" || !isInitializeRequest(request.body)) {
          return rpcError(reply, 400, -32000, `Bad Request: send ${SESSION_HEADER}, or initialize a session`);
        }
        if (sessions.size >= MAX_SESSIONS) {
          reply.header("retry-after", "1");
          return rpcError(reply, 503, -32000, "too many MCP sessions on this gateway; retry later");
        }
        session = await sessions.open({ keyId: caller.principal.id, organizationId: caller.principal.organizationId });
      }
      reply.hijack();
      for (const [name, value] of Object.entries(reply.getHeaders())) {
        if (value !== undefined) reply.raw.setHeader(name, value);
      }
      const raw = Object.assign(request.raw, { auth: authInfoOf(caller) });
      await session.transport.handleRequest(raw, reply.raw, request.body);
    },
  });
}
