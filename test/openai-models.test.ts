import { createTestClient } from "@kiln/testing/test-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, type FlowResult, runIdentityFlow } from "./support/identity-flow.js";
import { RUN_MODES, type RunningKiln } from "./support/run-modes.js";

const PROMPTS = 104;
const echo = (text: string) => ({
  model: "local/echo",
  systemPrompt: `${text} {{w}}`,
  variablesSchema: { type: "object", properties: { w: { type: "string" } } },
});

describe.each(RUN_MODES)("/v1 models in $name", (mode) => {
  let running: RunningKiln;
  let flow: FlowResult;
  let other: FlowResult;
  let theirs: { id: string; name: string };
  const headers = () => ({ authorization: `Bearer ${flow.apiKey}`, "content-type": "application/json" });
  const chat = (model: string, apiKey = flow.apiKey) =>
    fetch(`${running.base}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ model, messages: [], variables: { w: "hi" } }),
    });

  beforeAll(async () => {
    running = await mode.start();
    const client = createTestClient(running.base);
    flow = await runIdentityFlow(running.base, ["prompts:read", "skills:read", "runs:write"]);
    const { token, organizationId } = flow;
    for (let i = 0; i < PROMPTS; i++) {
      const name = `model-${i}`;
      // Every third prompt is published; every other has a draft only (latest) or nothing.
      if (i % 3 === 0) {
        const { prompt, version } = await client.createPublishedPrompt(token, organizationId, echo(name), { name });
        if (i % 2 === 0) {
          for (const label of ["canary", "beta"]) {
            const set = await call(running.base, "PUT", `/api/prompts/${prompt.id}/labels/${label}`, {
              token,
              body: { versionId: version.id },
            });
            expect(set.status).toBe(200);
          }
        }
      } else {
        const prompt = await client.createPrompt(token, organizationId, { name });
        if (i % 3 === 1) await client.createPromptVersion(token, prompt.id, echo(name));
      }
    }
    // Two prompts of one name: the newer is the one the name runs.
    await client.createPublishedPrompt(token, organizationId, echo("older"), { name: "twin" });
    await client.createPublishedPrompt(token, organizationId, echo("newer"), { name: "twin" });
    other = await runIdentityFlow(running.base, ["prompts:read", "skills:read", "runs:write"]);
    const mine = await client.createPublishedPrompt(other.token, other.organizationId, echo("theirs"), {
      name: "elsewhere",
    });
    theirs = { id: mine.prompt.id, name: "elsewhere" };
  }, 300_000);

  afterAll(async () => {
    await running?.stop();
  });

  it("lists every prompt's models in list order, with the labels each prompt's label route answers", async () => {
    const expected: string[] = [];
    let cursor = "";
    do {
      const page = await call(
        running.base,
        "GET",
        `/api/prompts?organizationId=${flow.organizationId}&limit=50${cursor ? `&cursor=${cursor}` : ""}`,
        { token: flow.token },
      );
      expect(page.status).toBe(200);
      for (const prompt of page.body.data as { id: string; publishedVersionId: string | null }[]) {
        const labels = await call(running.base, "GET", `/api/prompts/${prompt.id}/labels`, { token: flow.token });
        expect(labels.status).toBe(200);
        if (prompt.publishedVersionId) expected.push(`kiln/${prompt.id}`);
        for (const { label } of labels.body.data as { label: string }[]) {
          if (label !== "production") expected.push(`kiln/${prompt.id}@${label}`);
        }
      }
      cursor = page.body.nextCursor ?? "";
    } while (cursor);
    const listed = await fetch(`${running.base}/v1/models`, { headers: headers() });
    expect(listed.status).toBe(200);
    const all = ((await listed.json()) as { data: { id: string }[] }).data.map((m) => m.id);
    // The prompts' models first, then the models called directly (model runs: test/model-runs.test.ts).
    const models = all.filter((m) => m.startsWith("kiln/"));
    expect(models).toEqual(expected);
    expect(all.slice(0, models.length)).toEqual(models);
    expect(all.slice(models.length)).toContain("local/echo");
    // Published: 35 of the numbered prompts and the twins; labels on both sides of the 100th prompt.
    expect(models.filter((m) => !m.includes("@"))).toHaveLength(37);
    expect(models.filter((m) => m.endsWith("@canary"))).toHaveLength(18);
    expect(models.filter((m) => m.endsWith("@latest"))).toHaveLength(37 + 35);
  });

  it("runs a model named by id, by name (the newest of the name) and at a label", async () => {
    const read = async (res: Response) => {
      expect(res.status).toBe(200);
      return ((await res.json()) as { choices: { message: { content: string } }[] }).choices[0]?.message.content;
    };
    expect(await read(await chat("kiln/twin"))).toContain("newer");
    expect(await read(await chat("kiln/model-0@canary"))).toContain("model-0");
    const listed = await fetch(`${running.base}/v1/models`, { headers: headers() });
    const ids = ((await listed.json()) as { data: { id: string; name: string }[] }).data;
    const byId = ids.find((m) => m.name === "model-3" && !m.id.includes("@"));
    expect(await read(await chat(byId?.id ?? "none"))).toContain("model-3");
  });

  it("never resolves a model into another organization", async () => {
    for (const model of [`kiln/${theirs.id}`, `kiln/${theirs.name}`, `kiln/${theirs.id}@latest`]) {
      const res = await chat(model);
      expect(res.status).toBe(404);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("model_not_found");
    }
    // The owner runs it.
    expect((await chat(`kiln/${theirs.name}`, other.apiKey)).status).toBe(200);
    // Unpublished, or a draft only: no model without a label.
    expect((await chat("kiln/model-1")).status).toBe(404);
    expect((await chat("kiln/model-1@latest")).status).toBe(200);
  });
});
