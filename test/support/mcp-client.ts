/**
 * The official MCP client connected to a Kiln gateway's /mcp with an API key, for the MCP tests.
 * `eventStream` resolves once the server's event stream (the GET the client opens after
 * initialize) has answered: from then on the server can reach the client with notifications.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

export interface McpConnection {
  client: Client;
  transport: StreamableHTTPClientTransport;
  eventStream: Promise<void>;
}

export async function connectMcp(base: string, apiKey: string, query = ""): Promise<McpConnection> {
  let opened = () => {};
  const eventStream = new Promise<void>((resolve) => {
    opened = resolve;
  });
  const client = new Client({ name: "kiln-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp${query}`), {
    requestInit: { headers: { authorization: `Bearer ${apiKey}` } },
    fetch: async (input, init) => {
      const response = await fetch(input, init);
      if (init?.method === "GET" && response.ok) opened();
      return response;
    },
  });
  await client.connect(transport);
  return { client, transport, eventStream };
}
