import type { Client } from "@connectrpc/connect";
import type { EvaluationService } from "@kiln/proto/evaluation";
import type { ExecutionService } from "@kiln/proto/execution";
import {
  ErrorCode,
  type ListResourcesResult,
  type ListResourceTemplatesResult,
  McpError,
  type ReadResourceResult,
} from "@modelcontextprotocol/sdk/types.js";
import { evaluationRunView } from "../routes/evaluation-view-mappers.js";
import { anyRunView } from "../routes/run-list-routes.js";
import { callOptions, hasScope, type McpCaller } from "./caller.js";
import { asDomainError } from "./lists.js";

interface Clients {
  execution: Client<typeof ExecutionService>;
  evaluation: Client<typeof EvaluationService>;
}

/** The MCP spec's code for a resource that does not exist (or that the caller may not see). */
const RESOURCE_NOT_FOUND = -32002;
/** How many of the newest runs resources/list offers (the templates reach any other). */
const LISTED_RUNS = 50;
const JSON_TYPE = "application/json";

const RUN = /^kiln:\/\/runs\/([A-Za-z0-9_-]{1,100})$/;
const EVALUATION_RUN = /^kiln:\/\/skills\/([A-Za-z0-9_-]{1,100})\/evaluations\/([A-Za-z0-9_-]{1,100})$/;

export function listResourceTemplates(): ListResourceTemplatesResult {
  return {
    resourceTemplates: [
      {
        uriTemplate: "kiln://runs/{id}",
        name: "run",
        title: "A stored run",
        description: "A prompt, skill, agent or judge run as GET /api/runs/{id} answers it (needs runs:read)",
        mimeType: JSON_TYPE,
      },
      {
        uriTemplate: "kiln://skills/{skillId}/evaluations/{evaluationRunId}",
        name: "evaluation-run",
        title: "An evaluation run's report",
        description:
          "An evaluation run as GET /api/skills/{id}/evaluations/{evaluationRunId} answers it (needs evaluations:read)",
        mimeType: JSON_TYPE,
      },
    ],
  };
}

/** The organization's newest runs (with runs:read), as resources a client can browse. */
export async function listResources(clients: Clients, caller: McpCaller): Promise<ListResourcesResult> {
  if (!hasScope(caller, "runs:read")) return { resources: [] };
  const organizationId = caller.principal.organizationId;
  const r = await clients.execution.listRuns({ organizationId, limit: LISTED_RUNS }, callOptions(caller));
  return {
    resources: r.runs.map((run) => ({
      uri: `kiln://runs/${run.id}`,
      name: run.id,
      title: `${run.kind} run ${run.id} (${run.status})`,
      mimeType: JSON_TYPE,
    })),
  };
}

/**
 * Reads a run or an evaluation run through the same RPCs as the REST routes, so the services decide
 * as they do there (scope, organization); what the caller may not see is not found.
 */
export async function readResource(clients: Clients, caller: McpCaller, uri: string): Promise<ReadResourceResult> {
  const json = (value: unknown): ReadResourceResult => ({
    contents: [{ uri, mimeType: JSON_TYPE, text: JSON.stringify(value) }],
  });
  try {
    const run = RUN.exec(uri);
    if (run)
      return json(anyRunView((await clients.execution.getRun({ id: run[1], kind: "" }, callOptions(caller))).run));
    const evaluation = EVALUATION_RUN.exec(uri);
    if (evaluation) {
      const request = {
        organizationId: caller.principal.organizationId,
        skillId: evaluation[1] ?? "",
        evaluationRunId: evaluation[2] ?? "",
      };
      return json(evaluationRunView((await clients.evaluation.getEvaluationRun(request, callOptions(caller))).run));
    }
  } catch (e) {
    const error = asDomainError(e);
    if (!error) throw e;
    if (error.kind === "not_found") throw new McpError(RESOURCE_NOT_FOUND, `resource not found: ${uri}`, { uri });
    throw new McpError(ErrorCode.InvalidRequest, `${error.kind}: ${error.message}`, { uri });
  }
  throw new McpError(RESOURCE_NOT_FOUND, `resource not found: ${uri}`, { uri });
}
