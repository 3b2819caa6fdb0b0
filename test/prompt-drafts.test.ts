/**
 * Runs of an unsaved version (api.md "Runs": a prompt run's `draft`, the playground's edits) over
 * real HTTP in both run modes, local/echo answering the text it was sent: the draft's template,
 * variables schema, model, tools and includes run as a version would, after runs of the published
 * version warmed execution's resolve cache (which must not answer for a draft); the run keeps the
 * draft (input.draft, promptVersionId "", draft: true) and no version is created; chat drafts fill
 * their placeholder with the run's messages; the streamed run takes a draft too; a draft that
 * would not make a version is a 400 naming its field under `draft.`, a draft with a versionId or a
 * label is a 400, another organization's prompt is a 404, and none of them stores a run.
 */
import { createTestClient, type TestClient } from "@kiln/testing/test-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RUN_MODES, type RunningKiln } from "./support/run-modes.js";

// biome-ignore lint/suspicious/noExplicitAny: answers are asserted field by field.
type Loose = any;

const NAME = { type: "object", properties: { name: { type: "string" } }, required: ["name"] };

describe.each(RUN_MODES)("runs of unsaved versions in $name", (mode) => {
  let running: RunningKiln;
  let api: TestClient;
  let owner: string;
  let org: string;
  let promptId: string;
  let stranger: string;
  let strangerOrg: string;

  const run = (body: Record<string, unknown>, token = owner, id = promptId) =>
    api.post<Loose>(`/api/prompts/${id}/run`, { organizationId: org, ...body }, { token });
  const runCount = async () => {
    const r = await api.get<Loose>(`/api/runs?organizationId=${org}&limit=100`, { token: owner });
    expect(r.status).toBe(200);
    return r.body.data.length as number;
  };

  beforeAll(async () => {
    running = await mode.start();
    api = createTestClient(running.base);
    owner = (await api.signUp()).accessToken;
    org = (await api.onboard(owner)).organization.id;
    const published = await api.createPublishedPrompt(
      owner,
      org,
      { model: "local/echo", systemPrompt: "Greet {{name}}.", variablesSchema: NAME },
      { name: "greeter" },
    );
    promptId = published.prompt.id;
    const tone = await api.createPublishedPrompt(
      owner,
      org,
      { model: "local/echo", systemPrompt: "Be kind to {{name}}.", variablesSchema: NAME },
      { name: "tone" },
    );
    expect(tone.version.id).toBeTruthy();
    stranger = (await api.signUp()).accessToken;
    strangerOrg = (await api.onboard(stranger)).organization.id;
  }, 180_000);

  afterAll(async () => {
    await running?.stop();
  });

  it("runs the draft's template, not the published version's a warm cache holds, and keeps the draft on the run", async () => {
    for (let i = 0; i < 3; i++) {
      const warm = await run({ variables: { name: "Ada" } });
      expect(warm.status, warm.text).toBe(201);
      expect(warm.body.output.text).toBe("Greet Ada.");
    }
    const draft = { systemPrompt: "Welcome {{name}} aboard. {{> tone}}", variablesSchema: NAME, temperature: 0.2 };
    const r = await run({ variables: { name: "Ada" }, draft });
    expect(r.status, r.text).toBe(201);
    expect(r.body.output.text).toBe("Welcome Ada aboard. Be kind to Ada.");
    expect(r.body).toMatchObject({ kind: "prompt", promptId, promptVersionId: "", draft: true, model: "local/echo" });
    expect(r.body.input.draft).toMatchObject({ systemPrompt: draft.systemPrompt, temperature: 0.2 });
    const again = await api.get<Loose>(`/api/runs/${r.body.id}`, { token: owner });
    expect(again.body).toMatchObject({ draft: true, promptVersionId: "" });
    // No version was made of it, and the published version still runs.
    const prompt = await api.get<Loose>(`/api/prompts/${promptId}`, { token: owner });
    expect(prompt.body.latestVersion).toBe(1);
    expect((await run({ variables: { name: "Ada" } })).body.output.text).toBe("Greet Ada.");
  });

  it("runs a chat draft with the run's messages in its placeholder, and the draft's tools", async () => {
    const messages = [
      { role: "system", content: "Speak to {{name}}." },
      { role: "placeholder", name: "history" },
    ];
    const chat = await run({
      variables: { name: "Grace" },
      messages: [{ role: "user", content: "Where is the bug?" }],
      draft: { messages, variablesSchema: NAME },
    });
    expect(chat.status, chat.text).toBe(201);
    expect(chat.body.output.text).toBe("Speak to Grace.\n\nWhere is the bug?");
    expect(chat.body.input.draft.messages).toEqual(messages);

    const tool = await api.createTool(owner, org, { config: { result: { temperature: 21 } } });
    const withTool = await run({
      variables: { name: "Grace" },
      draft: { systemPrompt: "Weather for {{name}}.", variablesSchema: NAME, tools: [{ toolId: tool.id }] },
    });
    expect(withTool.status, withTool.text).toBe(201);
    expect(withTool.body.toolCalls).toHaveLength(1);
    expect(withTool.body.toolCalls[0]).toMatchObject({ toolKey: tool.toolKey, output: { temperature: 21 } });
  });

  it("streams a draft's run", async () => {
    const res = await fetch(`${running.base}/api/prompts/${promptId}/run/stream`, {
      method: "POST",
      headers: { authorization: `Bearer ${owner}`, "content-type": "application/json" },
      body: JSON.stringify({
        organizationId: org,
        variables: { name: "Lin" },
        draft: { systemPrompt: "Stream for {{name}}.", variablesSchema: NAME },
      }),
    });
    expect(res.status).toBe(200);
    const events = (await res.text())
      .split("\n")
      .filter((l) => l.startsWith("data: "))
      .map((l) => JSON.parse(l.slice(6)));
    const done = events.find((e) => e.type === "done");
    expect(done.run).toMatchObject({ draft: true, promptVersionId: "", output: { text: "Stream for Lin." } });
  });

  it("refuses a draft that would not make a version, or names a version too, and stores nothing", async () => {
    const before = await runCount();
    const undeclared = await run({ variables: { name: "Ada" }, draft: { systemPrompt: "Hi {{nobody}}" } });
    expect(undeclared.status, undeclared.text).toBe(400);
    expect(undeclared.body.error.code).toBe("invalid_argument");
    expect(undeclared.body.error.details[0].field).toMatch(/^draft\./);
    const cycle = await run({ variables: {}, draft: { systemPrompt: "{{> greeter}}" } });
    expect(cycle.status, cycle.text).toBe(400);
    expect(cycle.body.error.details[0].field).toBe("draft.systemPrompt");
    const unknownTool = await run({ variables: {}, draft: { systemPrompt: "x", tools: [{ toolId: "tool_nope" }] } });
    // As creating the version would answer: the tool it names is not found.
    expect(unknownTool.status, unknownTool.text).toBe(404);
    expect(unknownTool.body.error.details[0].field).toBe("draft.tools[0].toolId");
    const prompt = await api.get<Loose>(`/api/prompts/${promptId}`, { token: owner });
    const withVersion = await run({
      variables: { name: "Ada" },
      versionId: prompt.body.publishedVersionId,
      draft: { systemPrompt: "x" },
    });
    expect(withVersion.status, withVersion.text).toBe(400);
    expect(withVersion.body.error.details[0].field).toBe("versionId");
    const withLabel = await run({ variables: { name: "Ada" }, label: "production", draft: { systemPrompt: "x" } });
    expect(withLabel.status).toBe(400);
    const extra = await run({ variables: {}, draft: { systemPrompt: "x", message: "not a content field" } });
    expect(extra.status).toBe(400);
    // Another organization's member names the prompt from its own organization: not found.
    const theirs = await api.post<Loose>(
      `/api/prompts/${promptId}/run`,
      { organizationId: strangerOrg, variables: {}, draft: { systemPrompt: "x" } },
      { token: stranger },
    );
    expect(theirs.status, theirs.text).toBe(404);
    expect(await runCount()).toBe(before);
  });
});
