/**
 * What an agent answers with: the agent with its versions and the version described, and the
 * document an agent version diff compares.
 */
import { type DomainError, failedPrecondition } from "@kiln/kit/errors";
import type { JsonObject, JsonValue } from "./domain/json-schema.js";
import type { AgentDoc, AgentVersionDoc } from "./store/catalog-store.js";
import { type DescribedVersions, describeVersions } from "./versioned/described.js";

/** An agent with its versions (oldest first) and the version its `workflow` describes. */
export interface AgentView extends DescribedVersions<AgentVersionDoc> {
  agent: AgentDoc;
}

/** The empty workflow of a new agent's first draft. */
export const EMPTY_WORKFLOW = "{}";

export function agentView(agent: AgentDoc, versions: AgentVersionDoc[], versionId = ""): AgentView {
  return { agent, ...describeVersions("agent", agent._id, versions, versionId) };
}

/** The document an agent version diff compares (api.md "Version diffs"): `/workflow/...` paths. */
export function agentVersionDocument(v: AgentVersionDoc): JsonObject {
  return { workflow: JSON.parse(v.workflow) as JsonValue };
}

export function publishedVersionRefused(version: AgentVersionDoc): DomainError {
  return failedPrecondition(`agent version ${version.version} is published and cannot change; create a new version`, [
    { field: "agentVersionId", issue: "is published" },
  ]);
}
