/**
 * What an agent answers with: the agent with its versions and the version described, and the
 * document an agent version diff compares.
 */
import { type DomainError, failedPrecondition, notFound } from "@kiln/kit/errors";
import type { JsonObject, JsonValue } from "./domain/json-schema.js";
import { byVersionAscending, latestVersion, livePublishedVersion } from "./domain/versions.js";
import type { AgentDoc, AgentVersionDoc } from "./store/catalog-store.js";

/** An agent with its versions (oldest first) and the version its `workflow` describes. */
export interface AgentView {
  agent: AgentDoc;
  versions: AgentVersionDoc[];
  draftVersionId: string | null;
  publishedVersionId: string | null;
  /** The version asked for, else the draft, else the live published one. */
  described: AgentVersionDoc;
}

/** The empty workflow of a new agent's first draft. */
export const EMPTY_WORKFLOW = "{}";

export function agentView(agent: AgentDoc, versions: AgentVersionDoc[], versionId = ""): AgentView {
  const sorted = [...versions].sort(byVersionAscending);
  const draft = sorted.find((v) => v.status === "draft");
  const published = livePublishedVersion(sorted);
  let described = draft ?? published ?? latestVersion(sorted);
  if (versionId !== "") {
    described = sorted.find((v) => v._id === versionId);
    if (!described) throw notFound("agent version");
  }
  // Every agent is created with version 1.
  if (!described) throw new Error(`agent ${agent._id} has no version`);
  return {
    agent,
    versions: sorted,
    draftVersionId: draft?._id ?? null,
    publishedVersionId: published?._id ?? null,
    described,
  };
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
