/**
 * Stored runs and evaluation runs as MCP resources (docs/mcp.md "Resources"), read with the official
 * client: the same JSON as the REST routes, scoped as they are (runs:read / evaluations:read, the
 * key's organization), and not found for another organization's key.
 */
import { createLogger } from "@kiln/kit/logger";
import { buildEmbedded } from "@kiln/launcher/embedded";
import { createTestClient, type TestClient } from "@kiln/testing/test-client";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FlowResult, runIdentityFlow } from "./support/identity-flow.js";
import { connectMcp } from "./support/mcp-client.js";

const SCOPES = ["prompts:read", "skills:read", "runs:read", "runs:write", "evaluations:read", "evaluations:write"];

describe("MCP resources (embedded mode)", () => {
  let kiln: Awaited<ReturnType<typeof buildEmbedded>>;
  let base: string;
  let api: TestClient;
  let flow: FlowResult;
  let skillId: string;
  let runId: string;
  let evaluationRunId: string;
  const clients: Client[] = [];
  const open = async (key: string) => {
    const { client } = await connectMcp(base, key);
    clients.push(client);
    return client;
  };
  const rest = async (path: string) => {
    const res = await api.get<unknown>(path, { token: flow.apiKey });
    expect(res.status, res.text).toBe(200);
    return res.body;
  };
  /** The JSON of a resource's one text content. */
  const jsonOf = (read: { contents: ({ text: string } | { blob: string })[] }): unknown => {
    const [content] = read.contents;
    if (!content || !("text" in content)) throw new Error("expected one text content");
    return JSON.parse(content.text);
  };
  const failure = (promise: Promise<unknown>) =>
    promise.then(
      () => {
        throw new Error("expected the read to fail");
      },
      (e: unknown) => {
        expect(e).toBeInstanceOf(McpError);
        return e as McpError;
      },
    );

  beforeAll(async () => {
    kiln = await buildEmbedded({ logger: createLogger({ name: "test", level: "silent" }) });
    base = await kiln.gateway.app.listen({ host: "127.0.0.1", port: 0 });
    api = createTestClient(base);
    flow = await runIdentityFlow(base, SCOPES);
    const { token, organizationId } = flow;
    const hello = await api.createPublishedPrompt(token, organizationId, {
      systemPrompt: "Hello {{name}}.",
      variablesSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
    });
    const skill = await api.createSkill(token, organizationId, { name: "Greeter" });
    await api.replaceSkillPrompts(token, skill.draftVersionId ?? "", [{ promptId: hello.prompt.id }]);
    await api.publishSkill(token, skill.id);
    skillId = skill.id;
    await api.createEvaluationCases(token, organizationId, skillId, [
      { name: "greets", input: { name: "Ada" }, assertions: [{ type: "contains", value: "Ada" }] },
    ]);
    evaluationRunId = (await api.startEvaluation(token, organizationId, skillId)).id;
    await api.waitForEvaluation(token, skillId, evaluationRunId);

    const client = await open(flow.apiKey);
    const called = await client.callTool({ name: "skill_greeter", arguments: { name: "Grace" } });
    const run = called._meta?.["kiln/run"] as { id: string } | undefined;
    expect(run?.id).toMatch(/^srun_/);
    runId = run?.id ?? "";
  }, 120_000);

  afterAll(async () => {
    for (const client of clients) await client.close();
    await kiln?.close();
  });

  it("offers the two templates and lists the newest runs", async () => {
    const client = await open(flow.apiKey);
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual([
      "kiln://runs/{id}",
      "kiln://skills/{skillId}/evaluations/{evaluationRunId}",
    ]);
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toContain(`kiln://runs/${runId}`);
    expect(resources.every((r) => r.mimeType === "application/json")).toBe(true);
  });

  it("reads a run and an evaluation run as the REST routes answer them", async () => {
    const client = await open(flow.apiKey);
    const run = await client.readResource({ uri: `kiln://runs/${runId}` });
    expect(run.contents).toHaveLength(1);
    expect(run.contents[0]).toMatchObject({ uri: `kiln://runs/${runId}`, mimeType: "application/json" });
    expect(jsonOf(run)).toEqual(await rest(`/api/runs/${runId}`));

    const uri = `kiln://skills/${skillId}/evaluations/${evaluationRunId}`;
    const report = await client.readResource({ uri });
    const body = jsonOf(report);
    expect(body).toMatchObject({ id: evaluationRunId, status: "completed" });
    expect(body).toEqual(await rest(`/api/skills/${skillId}/evaluations/${evaluationRunId}`));
  });

  it("scopes reads like the REST routes, and hides other organizations' runs", async () => {
    const noRuns = await api.createApiKey(flow.token, flow.organizationId, ["prompts:read", "evaluations:read"]);
    const limited = await open(noRuns.key);
    expect((await limited.listResources()).resources).toEqual([]);
    const denied = await failure(limited.readResource({ uri: `kiln://runs/${runId}` }));
    expect(denied.message).toMatch(/permission_denied/);
    // evaluations:read is enough for the report.
    const report = await limited.readResource({ uri: `kiln://skills/${skillId}/evaluations/${evaluationRunId}` });
    expect(jsonOf(report)).toMatchObject({ id: evaluationRunId });

    const other = await runIdentityFlow(base, SCOPES);
    const stranger = await open(other.apiKey);
    expect((await stranger.listResources()).resources).toEqual([]);
    for (const uri of [`kiln://runs/${runId}`, `kiln://skills/${skillId}/evaluations/${evaluationRunId}`]) {
      const missing = await failure(stranger.readResource({ uri }));
      expect(missing.code).toBe(-32002);
    }
    const unknown = await failure(stranger.readResource({ uri: "kiln://nothing/here" }));
    expect(unknown.code).toBe(-32002);
  });
});
