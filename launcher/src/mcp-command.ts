/**
 * `kiln mcp` (docs/mcp.md): Kiln's MCP server over stdio for a local client. It relays every
 * message to the gateway's Streamable HTTP endpoint (`KILN_URL`/mcp, default
 * http://127.0.0.1:8080) with the API key `KILN_API_KEY`, and every answer back; `KILN_MCP_LABELS`
 * (comma-separated) lists labelled prompt versions as `name@label`.
 */
import type { Readable, Writable } from "node:stream";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import {
  ErrorCode,
  InitializeResultSchema,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
} from "@modelcontextprotocol/sdk/types.js";
import { UsageError } from "./internal-token-command.js";

const USAGE =
  "usage: kiln mcp   (stdio; KILN_API_KEY: an API key (sk_…); KILN_URL: the gateway, default http://127.0.0.1:8080;\n" +
  "                  KILN_MCP_LABELS: labels whose prompt versions are listed as name@label)";

export interface McpCommandIo {
  env: NodeJS.ProcessEnv;
  stdin?: Readable;
  stdout?: Writable;
}

/** Relays stdio to the gateway's /mcp until stdin closes; resolves when the relay has stopped. */
export async function mcpCommand(io: McpCommandIo): Promise<void> {
  const key = io.env.KILN_API_KEY;
  if (!key) throw new UsageError(`KILN_API_KEY is not set\n${USAGE}`);
  const base = (io.env.KILN_URL || "http://127.0.0.1:8080").replace(/\/+$/, "");
  const url = new URL(`${base}/mcp`);
  if (io.env.KILN_MCP_LABELS) url.searchParams.set("labels", io.env.KILN_MCP_LABELS);

  const remote = new StreamableHTTPClientTransport(url, {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
  });
  const local = new StdioServerTransport(io.stdin, io.stdout);
  const initializing = new Set<string | number>();

  const forward = async (message: JSONRPCMessage) => {
    if (isJSONRPCRequest(message) && message.method === "initialize") initializing.add(message.id);
    try {
      await remote.send(message);
    } catch (e) {
      if (!isJSONRPCRequest(message)) return;
      const reason = e instanceof Error ? e.message : String(e);
      await local.send({
        jsonrpc: "2.0",
        id: message.id,
        error: { code: ErrorCode.ConnectionClosed, message: `cannot reach ${url.origin} (KILN_URL): ${reason}` },
      });
    }
  };
  local.onmessage = (message) => void forward(message);
  remote.onmessage = (message) => {
    // The negotiated revision goes on every later HTTP request (MCP-Protocol-Version).
    if (isJSONRPCResultResponse(message) && initializing.delete(message.id)) {
      const result = InitializeResultSchema.safeParse(message.result);
      if (result.success) remote.setProtocolVersion(result.data.protocolVersion);
    }
    void local.send(message);
  };
  remote.onerror = (error) => process.stderr.write(`kiln mcp: ${error.message}\n`);

  const stopped = new Promise<void>((resolve) => {
    local.onclose = () => {
      void remote.terminateSession().finally(() => remote.close().finally(resolve));
    };
  });
  await remote.start();
  await local.start();
  (io.stdin ?? process.stdin).once("end", () => void local.close());
  return stopped;
}
