import type { Client } from "@connectrpc/connect";
import type { CatalogService } from "@kiln/proto/catalog";
import type { ExecutionService, Run } from "@kiln/proto/execution";
import {
  type CallToolResult,
  ErrorCode,
  type ListToolsResult,
  McpError,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { requestJsonText } from "../json-limits.js";
import { callOptions, type McpCaller } from "./caller.js";
import { asDomainError, jsonOf, listedFor, objectSchemaOf, slugOf } from "./lists.js";

/** A skill or an agent offered as a tool: its published version's input (and output) schema. */
export interface OfferedTool {
  kind: "skill" | "agent";
  id: string;
  tool: Tool;
}

interface Clients {
  catalog: Client<typeof CatalogService>;
  execution: Client<typeof ExecutionService>;
}

const ANY_OBJECT = { type: "object" } as const;

/** Unique tool names: `skill_<name>` / `agent_<name>`, a clash suffixed with the id's end. */
function named(tools: OfferedTool[]): OfferedTool[] {
  const seen = new Set<string>();
  return tools.map((t) => {
    let name = `${t.kind}_${slugOf(t.tool.title ?? "") || t.id}`;
    if (seen.has(name)) name = `${name}_${t.id.slice(-8)}`;
    seen.add(name);
    return { ...t, tool: { ...t.tool, name } };
  });
}

/**
 * The items with a published version, each with that version's content: the list's own when it
 * describes the published version, else read (`read`) for it.
 */
async function withPublished<R extends { publishedVersionId?: string; describedVersionId: string }, C>(
  items: R[],
  described: (item: R) => C | undefined,
  read: (item: R, versionId: string) => Promise<C | undefined>,
): Promise<{ item: R; content: C | undefined }[]> {
  const published: { item: R; content: C | undefined }[] = [];
  for (const item of items) {
    const versionId = item.publishedVersionId;
    if (!versionId) continue;
    const content = item.describedVersionId === versionId ? described(item) : await read(item, versionId);
    published.push({ item, content });
  }
  return published;
}

async function offeredSkills({ catalog }: Clients, caller: McpCaller): Promise<OfferedTool[]> {
  const options = callOptions(caller);
  const skills = await listedFor(caller, ["skills:read", "runs:write"], async (request, o) => {
    const { skills: items, nextCursor } = await catalog.listSkills(request, o);
    return { items, nextCursor };
  });
  const published = await withPublished(
    skills,
    (skill) => skill.content,
    async (skill, versionId) => (await catalog.getSkill({ id: skill.id, versionId }, options)).skill?.content,
  );
  return published.map(({ item: skill, content }) => {
    const outputSchema = objectSchemaOf(content?.outputSchema?.json);
    return {
      kind: "skill",
      id: skill.id,
      tool: {
        name: "",
        title: skill.name,
        description: skill.description || `The Kiln skill ${skill.name}`,
        inputSchema: { ...ANY_OBJECT, ...objectSchemaOf(content?.inputSchema?.json) },
        ...(outputSchema ? { outputSchema: { ...ANY_OBJECT, ...outputSchema } } : {}),
      },
    };
  });
}

async function offeredAgents({ catalog }: Clients, caller: McpCaller): Promise<OfferedTool[]> {
  const options = callOptions(caller);
  const agents = await listedFor(caller, ["agents:read", "runs:write"], async (request, o) => {
    const { agents: items, nextCursor } = await catalog.listAgents(request, o);
    return { items, nextCursor };
  });
  const published = await withPublished(
    agents,
    (agent) => agent.workflow,
    async (agent, versionId) => (await catalog.getAgent({ id: agent.id, versionId }, options)).agent?.workflow,
  );
  return published.map(({ item: agent, content: workflow }) => {
    const inputSchema = (jsonOf(workflow?.json) as { inputSchema?: unknown } | null)?.inputSchema;
    return {
      kind: "agent",
      id: agent.id,
      tool: {
        name: "",
        title: agent.name,
        description: agent.description || `The Kiln agent ${agent.name}`,
        inputSchema: { ...ANY_OBJECT, ...objectSchemaOf(JSON.stringify(inputSchema ?? null)) },
      },
    };
  });
}

async function offeredTools(clients: Clients, caller: McpCaller): Promise<OfferedTool[]> {
  const [skills, agents] = await Promise.all([offeredSkills(clients, caller), offeredAgents(clients, caller)]);
  return [...named(skills), ...named(agents)];
}

/** How long a session reuses its tool list to find the tool a call names (docs/mcp.md "Tools"). */
export const TOOL_LIST_REUSE_MS = 30_000;

/**
 * A session's offered tools: tools/list reads them afresh, tools/call reuses the last list for
 * TOOL_LIST_REUSE_MS (a name it does not hold reads them afresh). A session belongs to one API key.
 */
export function sessionTools(clients: Clients) {
  let last: { at: number; tools: OfferedTool[] } | undefined;
  const read = async (caller: McpCaller) => {
    last = { at: Date.now(), tools: await offeredTools(clients, caller) };
    return last.tools;
  };
  return {
    async list(caller: McpCaller): Promise<ListToolsResult> {
      return { tools: (await read(caller)).map((t) => t.tool) };
    },
    async find(caller: McpCaller, name: string): Promise<OfferedTool | undefined> {
      const fresh = last && Date.now() - last.at < TOOL_LIST_REUSE_MS;
      const found = fresh ? last?.tools.find((t) => t.tool.name === name) : undefined;
      return found ?? (await read(caller)).find((t) => t.tool.name === name);
    },
  };
}

/** A stored run as a tool result: the output as text and structured content, the run id in _meta. */
function resultOf(run: Run, tool: Tool): CallToolResult {
  const _meta = { "kiln/run": { id: run.id, kind: run.kind, status: run.status } };
  if (run.status !== "succeeded") {
    const why = run.error ? `${run.error.code}: ${run.error.message}` : run.status;
    return { isError: true, content: [{ type: "text", text: `run ${run.id} failed (${why})` }], _meta };
  }
  const output = jsonOf(run.output?.json) as { text?: unknown; json?: unknown } | null;
  const text = typeof output?.text === "string" ? output.text : JSON.stringify(output);
  const structuredContent =
    tool.outputSchema && output?.json !== null && typeof output?.json === "object"
      ? (output.json as Record<string, unknown>)
      : { runId: run.id, output };
  return { content: [{ type: "text", text }], structuredContent, _meta };
}

/**
 * Runs a listed skill or agent's published version through the execution service's run RPCs, as POST
 * /api/skills/{id}/run and /api/agents/{id}/run do (authorization, limits, idempotency, the stored run).
 */
export async function callTool(
  clients: Clients,
  caller: McpCaller,
  offered: OfferedTool | undefined,
  request: { name: string; arguments?: Record<string, unknown>; idempotencyKey?: string; signal?: AbortSignal },
): Promise<CallToolResult> {
  if (!offered) throw new McpError(ErrorCode.InvalidParams, `no tool named ${JSON.stringify(request.name)}`);
  const organizationId = caller.principal.organizationId;
  const input = requestJsonText(request.arguments ?? {});
  const options = callOptions(caller, request);
  try {
    const r =
      offered.kind === "skill"
        ? await clients.execution.runSkill({ organizationId, skillId: offered.id, input }, options)
        : await clients.execution.runAgent({ organizationId, agentId: offered.id, inputs: input }, options);
    if (!r.run) throw new McpError(ErrorCode.InternalError, "the run service answered without a run");
    return resultOf(r.run, offered.tool);
  } catch (e) {
    const error = asDomainError(e);
    if (!error) throw e;
    return { isError: true, content: [{ type: "text", text: `${error.kind}: ${error.message}` }] };
  }
}
