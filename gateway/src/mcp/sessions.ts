import { randomUUID } from "node:crypto";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { ChangedList } from "./changes.js";

/** Sessions per gateway process at most, and how long an idle one lives (docs/mcp.md "Limits"). */
export const MAX_SESSIONS = 1_000;
export const SESSION_IDLE_MS = 30 * 60_000;

export interface McpSession {
  transport: StreamableHTTPServerTransport;
  server: Server;
  /** The API key that opened it: only that key may use it. */
  ownerKeyId: string;
  /** The key's organization: the only one whose changes the session hears of. */
  organizationId: string;
  lastSeen: number;
}

/** The MCP sessions of this gateway process, in memory (a client re-initializes after a restart). */
export function mcpSessions(createServer: () => Server) {
  const sessions = new Map<string, McpSession>();
  const sweep = setInterval(() => {
    const cutoff = Date.now() - SESSION_IDLE_MS;
    for (const session of sessions.values()) if (session.lastSeen < cutoff) void session.transport.close();
  }, 60_000);
  sweep.unref();

  return {
    get size() {
      return sessions.size;
    },
    /** The session `id` if `keyId` opened it. */
    find(id: string, keyId: string): McpSession | undefined {
      const session = sessions.get(id);
      if (!session || session.ownerKeyId !== keyId) return undefined;
      session.lastSeen = Date.now();
      return session;
    },
    /** Tells the sessions of `organizationId` that `lists` changed (list_changed notifications). */
    notify(organizationId: string, lists: ChangedList[]): void {
      for (const session of sessions.values()) {
        if (session.organizationId !== organizationId) continue;
        // A client without its event stream open misses it, as the protocol allows.
        if (lists.includes("prompts")) session.server.sendPromptListChanged().catch(() => undefined);
        if (lists.includes("tools")) session.server.sendToolListChanged().catch(() => undefined);
      }
    },
    /** A new session's transport, connected to its own server; registered once initialize succeeds. */
    async open(owner: { keyId: string; organizationId: string }): Promise<McpSession> {
      const session: McpSession = {
        server: createServer(),
        ownerKeyId: owner.keyId,
        organizationId: owner.organizationId,
        lastSeen: Date.now(),
        transport: new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => {
            sessions.set(id, session);
          },
          onsessionclosed: (id) => {
            sessions.delete(id);
          },
        }),
      };
      session.transport.onclose = () => {
        if (session.transport.sessionId) sessions.delete(session.transport.sessionId);
      };
      await session.server.connect(session.transport);
      return session;
    },
    async closeAll() {
      clearInterval(sweep);
      await Promise.all([...sessions.values()].map((s) => s.transport.close()));
      sessions.clear();
    },
  };
}
