import type { TestClient } from "@kiln/testing/test-client";

/**
 * An agent of three steps and a branch, through the public routes: `draft` (prompt) → unless
 * `inputs.skipWeather`, `weather` (tool) → `polish` (prompt). Returns the ids and the workflow.
 */
export interface AgentFixture {
  agentId: string;
  draftVersionId: string;
  toolId: string;
  toolKey: string;
  workflow: Record<string, unknown>;
}

const expectStatus = (what: string, res: { status: number; text: string }, status: number) => {
  if (res.status !== status) throw new Error(`${what}: expected ${status}, got ${res.status}: ${res.text}`);
};

export const AGENT_INPUT_SCHEMA = {
  type: "object",
  properties: { topic: { type: "string", minLength: 1 }, city: { type: "string" }, skipWeather: { type: "boolean" } },
  required: ["topic", "city"],
};

export function agentWorkflow(ids: { draftPromptId: string; polishPromptId: string; toolId: string }) {
  return {
    inputSchema: AGENT_INPUT_SCHEMA,
    entry: "draft",
    steps: [
      {
        id: "draft",
        type: "prompt",
        ref: { promptId: ids.draftPromptId },
        input: { topic: "{{inputs.topic}}" },
        next: [
          { when: { "==": [{ var: "inputs.skipWeather" }, true] }, to: "polish" },
          { when: true, to: "weather" },
        ],
      },
      { id: "weather", type: "tool", ref: { toolId: ids.toolId }, input: { city: "{{inputs.city}}" }, next: "polish" },
      {
        id: "polish",
        type: "prompt",
        ref: { promptId: ids.polishPromptId },
        input: { draft: "{{steps.draft.output}}", sky: "{{steps.weather.output.sky}}" },
      },
    ],
    output: "{{steps.polish.output}}",
  };
}

/** Creates the prompts, the tool and an agent whose draft holds the workflow (not published). */
export async function createAgentFixture(
  api: TestClient,
  token: string,
  organizationId: string,
): Promise<AgentFixture> {
  const tool = await api.createTool(token, organizationId, {
    name: "Weather",
    config: { result: { sky: "clear", temperatureC: 21 } },
    inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  });
  const draft = await api.createPublishedPrompt(token, organizationId, {
    systemPrompt: "Draft a note about {{topic}}.",
    variablesSchema: { type: "object", properties: { topic: { type: "string" } }, required: ["topic"] },
  });
  const polish = await api.createPublishedPrompt(token, organizationId, {
    systemPrompt: "Polish this: {{draft}} (sky: {{sky}})",
    variablesSchema: {
      type: "object",
      properties: { draft: { type: "string" }, sky: { type: "string" } },
      required: ["draft"],
    },
  });
  const created = await api.post<{ id: string; draftVersionId: string }>(
    "/api/agents",
    { organizationId, name: "Note writer" },
    { token },
  );
  expectStatus("create agent", created, 201);
  const workflow = agentWorkflow({ draftPromptId: draft.prompt.id, polishPromptId: polish.prompt.id, toolId: tool.id });
  const saved = await api.request("PUT", `/api/agent-versions/${created.body.draftVersionId}/workflow`, {
    token,
    body: { workflow },
  });
  expectStatus("save workflow", saved, 200);
  return {
    agentId: created.body.id,
    draftVersionId: created.body.draftVersionId,
    toolId: tool.id,
    toolKey: tool.toolKey,
    workflow,
  };
}

/** createAgentFixture, then publish. */
export async function createPublishedAgent(api: TestClient, token: string, organizationId: string) {
  const fixture = await createAgentFixture(api, token, organizationId);
  const published = await api.post(`/api/agents/${fixture.agentId}/publish`, {}, { token });
  expectStatus("publish agent", published, 200);
  return fixture;
}
