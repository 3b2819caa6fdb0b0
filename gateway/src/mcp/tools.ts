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
import { callOptions, hasScope, type McpCaller } from "./caller.js";
import { asDomainError, collectPages, jsonOf, objectSchemaOf, slugOf } from "./lists.js";

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

async function offeredSkills({ catalog }: Clients, caller: McpCaller): Promise<OfferedTool[]> {
  if (!hasScope(caller, "skills:read") || !hasScope(caller, "runs:write")) return [];
  const options = callOptions(caller);
  const skills = await collectPages(async (cursor, limit) => {
    const r = await catalog.listSkills({ organizationId: caller.principal.organizationId, cursor, limit }, options);
    return { items: r.skills, nextCursor: r.nextCursor };
  });
  const offered: OfferedTool[] = [];
  for (const skill of skills) {
    const versionId = skill.publishedVersionId;
    if (!versionId) continue;
    const content =
      skill.describedVersionId === versionId
        ? skill.content
        : (await catalog.getSkill({ id: skill.id, versionId }, options)).skill?.content;
    const outputSchema = objectSchemaOf(content?.outputSchema?.json);
    offered.push({
      kind: "skill",
      id: skill.id,
      tool: {
        name: "",
        title: skill.name,
        description: skill.description || `The Kiln skill ${skill.name}`,
        inputSchema: { ...ANY_OBJECT, ...objectSchemaOf(content?.inputSchema?.json) },
        ...(outputSchema ? { outputSchema: { ...ANY_OBJECT, ...outputSchema } } : {}),
      },
    });
  }
  return offered;
}

async function offeredAgents({ catalog }: Clients, caller: McpCaller): Promise<OfferedTool[]> {
  if (!hasScope(caller, "agents:read") || !hasScope(caller, "runs:write")) return [];
  const options = callOptions(caller);
  const agents = await collectPages(async (cursor, limit) => {
    const r = await catalog.listAgents({ organizationId: caller.principal.organizationId, cursor, limit }, options);
    return { items: r.agents, nextCursor: r.nextCursor };
  });
  const offered: OfferedTool[] = [];
  for (const agent of agents) {
    const versionId = agent.publishedVersionId;
    if (!versionId) continue;
    const workflow =
      agent.describedVersionId === versionId
        ? agent.workflow
        : (await catalog.getAgent({ id: agent.id, versionId }, options)).agent?.workflow;
    const inputSchema = (jsonOf(workflow?.json) as { inputSchema?: unknown } | null)?.inputSchema;
    offered.push({
      kind: "agent",
      id: agent.id,
      tool: {
        name: "",
        title: agent.name,
        description: agent.description || `The Kiln agent ${agent.name}`,
        inputSchema: { ...ANY_OBJECT, ...objectSchemaOf(JSON.stringify(inputSchema ?? null)) },
      },
    });
  }
  return offered;
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
