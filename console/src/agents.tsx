import type { Agent, Kiln } from "@kiln/sdk";
import { useCallback } from "react";
import { type Act, useAction, useLoaded } from "./action.js";
import { AgentRuns } from "./agent-runs.js";
import { WorkflowEditor } from "./agent-workflow-editor.js";
import type { Session } from "./api.js";
import { type FamilyList, listPage } from "./resource-list.js";
import type { Navigate } from "./router.js";
import { ActButton, Loading, Pending } from "./ui.js";
import { type DiffFamily, DraftHeading, NewVersionButton, VersionDiffPanel } from "./versioned.js";
import { useSources } from "./workflow-sources.js";

/** Agents of the organization: list, create, open. */
export const agentList: FamilyList<Agent> = {
  client: (kiln) => kiln.agents,
  noun: "agent",
  nameLabel: "Agent name",
  emptyText: "No agent yet.",
};

export const AgentList = listPage(agentList);

const agentDiff: DiffFamily = { noun: "agent", diff: (kiln, id, versionId) => kiln.agents.diff(id, versionId) };

/** The agent's versions, the live one marked; an older published one can be rolled back to. */
function AgentVersions({
  kiln,
  agent,
  act,
  onAgent,
}: {
  kiln: Kiln;
  agent: Agent;
  act: Act;
  onAgent: (a: Agent) => void;
}) {
  return (
    <section className="card" aria-labelledby="agent-versions">
      <h2 id="agent-versions">Versions</h2>
      <ul>
        {[...agent.versions].reverse().map((v) => (
          <li key={v.id}>
            Version {v.version} {v.id === agent.publishedVersionId ? "(published, live)" : `(${v.status})`}{" "}
            {v.status === "published" && v.id !== agent.publishedVersionId && (
              <ActButton
                act={act}
                run={async () => onAgent(await kiln.agents.rollback(agent.id, v.id))}
                className="secondary"
              >
                Roll back to version {v.version}
              </ActButton>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}

/** One agent: its workflow in the builder (or as JSON), validate, save, publish, roll back, run, rerun, compare. */
export function AgentDetail({
  kiln,
  session,
  id,
  navigate,
}: {
  kiln: Kiln;
  session: Session;
  id: string;
  navigate: Navigate;
}) {
  const { error, setError, act } = useAction();
  const read = useCallback(() => kiln.agents.get(id), [kiln, id]);
  const { value: agent, setValue: setAgent, reload } = useLoaded(read, setError);
  const sources = useSources(kiln, session.organizationId);
  if (!agent) return <Pending error={error} what="the agent" />;
  const draft = agent.draftVersionId;
  return (
    <main>
      <DraftHeading
        resource={agent}
        noDraft="No draft: New version starts one from the latest version."
        error={error}
      />
      {!draft && (
        <p>
          <NewVersionButton act={act} create={() => kiln.agents.createVersion(id)} reload={reload} />
        </p>
      )}
      {sources ? (
        <WorkflowEditor
          key={`${agent.describedVersionId}:${draft ? "draft" : "published"}`}
          kiln={kiln}
          agent={agent}
          sources={sources}
          act={act}
          onAgent={setAgent}
        />
      ) : (
        <Loading what="the prompts, skills and tools" />
      )}
      <AgentVersions kiln={kiln} agent={agent} act={act} onAgent={setAgent} />
      <VersionDiffPanel family={agentDiff} kiln={kiln} resource={agent} />
      <AgentRuns kiln={kiln} session={session} agent={agent} act={act} error={error} navigate={navigate} />
    </main>
  );
}
