/**
 * Never down from one request (issue #32), in both run modes as they ship: `pnpm start`'s process
 * and the image's processes, each under its heap bound (--max-old-space-size). Every documented
 * limit (docs/api.md "Limits") is served exactly at its value (saved, read, diffed, run, evaluated
 * where that applies) and refused one past it with invalid_argument naming the field and the limit;
 * 16 concurrent requests at the largest limits leave /healthz answering within 1 s and every
 * process alive.
 */
import { execFileSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { jsonBytes, LIMITS } from "@kiln/kit/limits";
import { createTestClient, type TestClient, type TestResponse } from "@kiln/testing/test-client";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ROOT } from "./bench/load.js";
import { startDistributed } from "./support/distributed.js";
import { startKilnProcess } from "./support/kiln-process.js";
import { bundleOfSize, sized } from "./support/sized.js";

interface Running {
  base: string;
  /** Exit codes of every process of the platform (null: alive). */
  exitCodes(): (number | null)[];
  stop(): Promise<void>;
}

const modes = [
  {
    name: "embedded mode (pnpm start's process)",
    async start(): Promise<Running> {
      const dir = await mkdtemp(join(tmpdir(), "kiln-limits-"));
      const kiln = await startKilnProcess(dir, {}, { compiled: true });
      return {
        base: kiln.base,
        exitCodes: () => [kiln.child.exitCode],
        stop: async () => {
          kiln.child.kill("SIGTERM");
          await kiln.exited;
          await rm(dir, { recursive: true, force: true });
        },
      };
    },
  },
  {
    name: "distributed mode (the image's processes)",
    async start(): Promise<Running> {
      const kiln = await startDistributed({
        mongoUrl: inject("mongoUrl"),
        natsUrl: inject("natsUrl"),
        compiled: true,
        env: { RATE_LIMIT_PER_MINUTE: "0" },
      });
      return {
        base: kiln.gatewayUrl,
        exitCodes: () => [
          ...Object.values(kiln.instances).flatMap((list) => list.map((r) => r.process.exitCode)),
          kiln.processes.gateway.exitCode,
        ],
        stop: () => kiln.stop(),
      };
    },
  },
];

/** The refusal of a limit: 400, invalid_argument, the field named, the limit's value in the issue. */
function expectRefused(r: TestResponse, field: string, limit: string) {
  expect(r.status, r.text).toBe(400);
  const body = r.body as { error: { code: string; details: { field: string; issue: string }[] } };
  expect(body.error.code).toBe("invalid_argument");
  expect(body.error.details).toContainEqual({ field, issue: expect.stringContaining(limit) });
}

/**
 * A POST whose body is past its limit. The gateway answers 413 from the Content-Length and closes
 * without reading the body, so a client still writing it may fail with EPIPE before reading the
 * answer (fetch did, once, in a fresh clone): the body is sent only if no answer came first.
 */
function postPastLimit(
  base: string,
  path: string,
  token: string,
  body: string,
): Promise<{ status: number; text: string; body: unknown }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(new URL(path, base), {
      method: "POST",
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
        "content-length": Buffer.byteLength(body),
      },
    });
    let answered = false;
    req.on("response", (res) => {
      answered = true;
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        text += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text, body: JSON.parse(text || "null") }));
      res.on("error", reject);
    });
    req.on("error", (e) => {
      if (!answered) reject(e);
    });
    // The headers first: a server that refuses from the Content-Length answers now, and the body
    // is never raced against its answer; one that reads bodies gets it after a moment.
    req.flushHeaders();
    const later = setTimeout(() => req.end(body), 2_000);
    req.on("response", () => clearTimeout(later));
  });
}

const KIB = (bytes: number) => `${bytes / 1024} KiB`;

beforeAll(() => {
  execFileSync(process.execPath, ["scripts/build.mjs"], { cwd: ROOT, stdio: "inherit" });
}, 120_000);

describe.each(modes)("limits in $name", (mode) => {
  let running: Running;
  let api: TestClient;
  let token: string;
  let organizationId: string;
  const post = (path: string, body: unknown) => api.post(path, body, { token });

  beforeAll(async () => {
    running = await mode.start();
    api = createTestClient(running.base);
    ({ accessToken: token } = await api.signUp());
    ({
      organization: { id: organizationId },
    } = await api.onboard(token));
  }, 180_000);

  afterAll(async () => {
    await running?.stop();
  });

  it("serves prompt texts and names at their limits (saved, read, run) and refuses one past", async () => {
    const name = "n".repeat(LIMITS.nameChars);
    const description = "d".repeat(LIMITS.descriptionChars);
    const prompt = await post("/api/prompts", { organizationId, name, description });
    expect(prompt.status, prompt.text).toBe(201);
    const promptId = (prompt.body as { id: string }).id;
    expectRefused(await post("/api/prompts", { organizationId, name: `${name}n` }), "name", `${LIMITS.nameChars}`);
    expectRefused(
      await post("/api/prompts", { organizationId, name: "p", description: `${description}d` }),
      "description",
      `${LIMITS.descriptionChars}`,
    );

    const text = (first: string) => `${first} {{topic}}\n${"s".repeat(LIMITS.promptTextChars - first.length - 11)}`;
    const version = (systemPrompt: string) => ({
      systemPrompt,
      developerPrompt: text("Developer"),
      variablesSchema: sized(LIMITS.jsonSchemaBytes, (pad) => ({
        type: "object",
        description: pad,
        properties: { topic: { type: "string" } },
      })),
      responseFormat: sized(LIMITS.jsonSchemaBytes, (pad) => ({
        type: "json_schema",
        schema: { type: "object", description: pad, properties: { answer: { type: "string" } } },
      })),
      model: "local/echo",
    });
    const first = version(text("System"));
    expect(first.systemPrompt).toHaveLength(LIMITS.promptTextChars);
    const v1 = await post(`/api/prompts/${promptId}/versions`, first);
    expect(v1.status, v1.text).toBe(201);
    const v2 = await post(`/api/prompts/${promptId}/versions`, version(text("Systems")));
    expect(v2.status, v2.text).toBe(201);
    const v2Id = (v2.body as { id: string }).id;
    const read = await api.get<{ version: { systemPrompt: string } }>(`/api/prompts/${promptId}`, {
      token,
      query: { versionId: v2Id },
    });
    expect(read.body.version.systemPrompt).toHaveLength(LIMITS.promptTextChars);
    expect((await post(`/api/prompts/${promptId}/publish`, { versionId: v2Id })).status).toBe(200);
    const run = await post(`/api/prompts/${promptId}/run`, { organizationId, variables: { topic: "limits" } });
    expect(run.status, run.text).toBe(201);
    expect(run.body).toMatchObject({ status: "succeeded" });

    const past = `${text("System")}s`;
    expectRefused(await post(`/api/prompts/${promptId}/versions`, { systemPrompt: past }), "systemPrompt", "100000");
    expectRefused(
      await post(`/api/prompts/${promptId}/versions`, { systemPrompt: "x", developerPrompt: past }),
      "developerPrompt",
      "100000",
    );
    const over = sized(LIMITS.jsonSchemaBytes + 1, (pad) => ({ type: "object", description: pad }));
    expectRefused(
      await post(`/api/prompts/${promptId}/versions`, { systemPrompt: "x", variablesSchema: over }),
      "variablesSchema",
      KIB(LIMITS.jsonSchemaBytes),
    );
    expectRefused(
      await post(`/api/prompts/${promptId}/versions`, {
        systemPrompt: "x",
        responseFormat: { type: "json_schema", schema: over },
      }),
      "responseFormat",
      KIB(LIMITS.jsonSchemaBytes),
    );
  });

  it("serves a tool's configuration and input schema at their limits (saved, diffed) and refuses one past", async () => {
    const config = sized(LIMITS.toolConfigBytes, (pad) => ({ result: { text: pad } }));
    const inputSchema = sized(LIMITS.jsonSchemaBytes, (pad) => ({ type: "object", description: pad }));
    const tool = await post("/api/tools", {
      organizationId,
      toolKey: "big_stub",
      name: "big stub",
      type: "manual_stub",
      config,
      inputSchema,
    });
    expect(tool.status, tool.text).toBe(201);
    const toolId = (tool.body as { id: string }).id;
    const next = sized(LIMITS.toolConfigBytes, (pad) => ({ result: { text: pad, more: true } }));
    const v2 = await post(`/api/tools/${toolId}/versions`, { config: next, inputSchema });
    expect(v2.status, v2.text).toBe(201);
    const diff = await api.get(`/api/tools/${toolId}/versions/${(v2.body as { id: string }).id}/diff`, { token });
    expect(diff.status, diff.text).toBe(200);
    expect(diff.text).toContain("config");
    const over = sized(LIMITS.toolConfigBytes + 1, (pad) => ({ result: { text: pad } }));
    expectRefused(
      await post("/api/tools", { organizationId, toolKey: "over", name: "o", type: "manual_stub", config: over }),
      "config",
      KIB(LIMITS.toolConfigBytes),
    );
    const overSchema = sized(LIMITS.jsonSchemaBytes + 1, (pad) => ({ type: "object", description: pad }));
    expectRefused(
      await post("/api/tools", {
        organizationId,
        toolKey: "over2",
        name: "o",
        type: "manual_stub",
        config: { result: {} },
        inputSchema: overSchema,
      }),
      "inputSchema",
      KIB(LIMITS.jsonSchemaBytes),
    );
  });

  it("runs and evaluates variables at their limit and refuses one past; refuses a case batch past its count", async () => {
    const { prompt } = await api.createPublishedPrompt(token, organizationId, {
      systemPrompt: "Summarize {{doc}}",
      variablesSchema: { type: "object", properties: { doc: { type: "string" } }, required: ["doc"] },
      model: "local/echo",
    });
    const variables = sized(LIMITS.variablesBytes, (pad) => ({ doc: pad }));
    const run = await post(`/api/prompts/${prompt.id}/run`, { organizationId, variables });
    expect(run.status, run.text).toBe(201);
    expect(run.body).toMatchObject({ status: "succeeded" });
    expectRefused(
      await post(`/api/prompts/${prompt.id}/run`, {
        organizationId,
        variables: sized(LIMITS.variablesBytes + 1, (pad) => ({ doc: pad })),
      }),
      "variables",
      KIB(LIMITS.variablesBytes),
    );

    const skill = await api.createSkill(token, organizationId);
    await api.replaceSkillPrompts(token, skill.draftVersionId ?? "", [
      { promptId: prompt.id, variables: { doc: "{{input.doc}}" } },
    ]);
    await api.publishSkill(token, skill.id);
    const input = sized(LIMITS.variablesBytes, (pad) => ({ doc: pad }));
    const expectedOutput = sized(LIMITS.expectedOutputBytes, (pad) => ({ answer: pad }));
    const [atLimit] = await api.createEvaluationCases(token, organizationId, skill.id, [{ input, expectedOutput }]);
    expect(atLimit?.input).toEqual(input);
    const started = await api.startEvaluation(token, organizationId, skill.id, { targets: ["published"] });
    const finished = await api.waitForEvaluation(token, skill.id, started.id, { timeoutMs: 60_000 });
    expect(finished.status).toBe("completed");

    const cases = (n: number) => Array.from({ length: n }, (_, i) => ({ input: { doc: `case ${i}` } }));
    const many = await post(`/api/skills/${skill.id}/evaluation-cases`, {
      organizationId,
      cases: cases(LIMITS.casesPerRequest),
    });
    expect(many.status, many.text).toBe(201);
    expectRefused(
      await post(`/api/skills/${skill.id}/evaluation-cases`, {
        organizationId,
        cases: cases(LIMITS.casesPerRequest + 1),
      }),
      "cases",
      `${LIMITS.casesPerRequest}`,
    );
    expectRefused(
      await post(`/api/skills/${skill.id}/evaluation-cases`, {
        organizationId,
        cases: [{ input: sized(LIMITS.variablesBytes + 1, (pad) => ({ doc: pad })) }],
      }),
      "cases[0].input",
      KIB(LIMITS.variablesBytes),
    );
    expectRefused(
      await post(`/api/skills/${skill.id}/evaluation-cases`, {
        organizationId,
        cases: [{ input: { doc: "x" }, expectedOutput: sized(LIMITS.expectedOutputBytes + 1, (pad) => ({ a: pad })) }],
      }),
      "cases[0].expectedOutput",
      KIB(LIMITS.expectedOutputBytes),
    );
    const assertions = (n: number) => Array.from({ length: n }, () => ({ type: "contains", value: "x" }));
    const fifty = await post(`/api/skills/${skill.id}/evaluation-cases`, {
      organizationId,
      cases: [{ input: { doc: "x" }, assertions: assertions(LIMITS.assertionsPerCase) }],
    });
    expect(fifty.status, fifty.text).toBe(201);
    expectRefused(
      await post(`/api/skills/${skill.id}/evaluation-cases`, {
        organizationId,
        cases: [{ input: { doc: "x" }, assertions: assertions(LIMITS.assertionsPerCase + 1) }],
      }),
      "cases[0].assertions",
      `${LIMITS.assertionsPerCase}`,
    );
  });

  it("takes a body of exactly the body limit and answers 413 one byte past it", async () => {
    const skill = await api.createSkill(token, organizationId);
    // Five cases whose body is exactly 1 MiB of JSON.
    const body = (last: number) => ({
      organizationId,
      cases: [
        ...Array.from({ length: 4 }, () => ({ input: { doc: "d".repeat(200_000) } })),
        { input: { doc: "e".repeat(last) } },
      ],
    });
    const atLimit = body(LIMITS.bodyBytes - jsonBytes(body(0)));
    expect(jsonBytes(atLimit)).toBe(LIMITS.bodyBytes);
    const path = `/api/skills/${skill.id}/evaluation-cases`;
    const served = await api.request("POST", path, {
      token,
      rawBody: JSON.stringify(atLimit),
      headers: { "content-type": "application/json" },
    });
    expect(served.status, served.text).toBe(201);
    const past = await postPastLimit(running.base, path, token, `${JSON.stringify(atLimit)} `);
    expect(past.status, past.text).toBe(413);
    expect(past.body).toMatchObject({ error: { code: "payload_too_large" } });
  });

  it("imports a bundle of exactly the import limit (dry run) and answers 413 one byte past it", async () => {
    const { bundle: base, prompts } = bundleOfSize(LIMITS.importBytes);
    expect(jsonBytes(base)).toBe(LIMITS.importBytes);
    const path = `/api/organizations/${organizationId}/import`;
    const json = { "content-type": "application/json" };
    const served = await api.request("POST", path, {
      token,
      query: { dryRun: "true" },
      rawBody: JSON.stringify(base),
      headers: json,
    });
    expect(served.status, served.text.slice(0, 300)).toBe(200);
    expect(served.body).toMatchObject({ dryRun: true, summary: { created: prompts } });
    const past = await postPastLimit(running.base, `${path}?dryRun=true`, token, `${JSON.stringify(base)} `);
    expect(past.status, past.text.slice(0, 300)).toBe(413);
    expect(past.body).toMatchObject({
      error: { code: "payload_too_large", message: expect.stringContaining("8 MiB") },
    });
  });

  it("serves assertion texts at their limits and refuses one past", async () => {
    const skill = await api.createSkill(token, organizationId);
    const path = `/api/skills/${skill.id}/evaluation-cases`;
    const atLimit = {
      organizationId,
      cases: [
        {
          input: {},
          assertions: [
            { type: "contains", value: "c".repeat(LIMITS.assertionTextChars) },
            { type: "llm_judge", rubric: "r".repeat(LIMITS.assertionTextChars) },
          ],
        },
      ],
    };
    const served = await post(path, atLimit);
    expect(served.status, served.text.slice(0, 300)).toBe(201);
    expectRefused(
      await post(path, {
        organizationId,
        cases: [{ input: {}, assertions: [{ type: "llm_judge", rubric: "r".repeat(LIMITS.assertionTextChars + 1) }] }],
      }),
      "cases[0].assertions[0].rubric",
      `${LIMITS.assertionTextChars}`,
    );
  });

  it("refuses a webhook URL past its limit", async () => {
    const url = `https://hooks.example.com/${"p".repeat(LIMITS.webhookUrlChars)}`;
    expectRefused(
      await post("/api/webhooks", { organizationId, url, events: ["run.completed"] }),
      "url",
      `${LIMITS.webhookUrlChars}`,
    );
  });

  it("keeps /healthz answering within 1 s and every process alive through 16 concurrent maximal requests", async () => {
    const { prompt } = await api.createPublishedPrompt(token, organizationId, {
      systemPrompt: "Summarize {{doc}}",
      variablesSchema: { type: "object", properties: { doc: { type: "string" } } },
      model: "local/echo",
    });
    const bare = await api.createPrompt(token, organizationId);
    const skill = await api.createSkill(token, organizationId);
    const maxVersion = {
      systemPrompt: `{{doc}}${"s".repeat(LIMITS.promptTextChars - 7)}`,
      developerPrompt: "v".repeat(LIMITS.promptTextChars),
      variablesSchema: sized(LIMITS.jsonSchemaBytes, (pad) => ({
        type: "object",
        description: pad,
        properties: { doc: { type: "string" } },
      })),
    };
    const requests = Array.from({ length: 16 }, (_, i) => {
      if (i % 3 === 0) return post(`/api/prompts/${bare.id}/versions`, maxVersion);
      if (i % 3 === 1)
        return post(`/api/prompts/${prompt.id}/run`, {
          organizationId,
          variables: sized(LIMITS.variablesBytes, (pad) => ({ doc: pad })),
        });
      return post(`/api/skills/${skill.id}/evaluation-cases`, {
        organizationId,
        cases: Array.from({ length: 4 }, () => ({
          input: sized(LIMITS.variablesBytes - 2_000, (pad) => ({ doc: pad })),
        })),
      });
    });
    let done = false;
    let probes = 0;
    const probe = (async () => {
      while (!done) {
        const h = await fetch(`${running.base}/healthz`, { signal: AbortSignal.timeout(5_000) });
        expect(h.status).toBe(200);
        probes++;
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    const answers = await Promise.all(requests);
    done = true;
    await probe;
    for (const answer of answers) expect(answer.status, answer.text.slice(0, 300)).toBeLessThan(300);
    // The process stayed live: every probe answered 200 within its 5 s abort while the largest
    // requests were in flight (how fast it answered is the benchmarks' business, not a test's).
    expect(probes).toBeGreaterThan(0);
    expect(running.exitCodes().every((code) => code === null)).toBe(true);
  });
});

describe("a long version history in embedded mode (pnpm start's process)", () => {
  let running: Running;
  let api: TestClient;
  let token: string;
  let organizationId: string;
  const post = (path: string, body: unknown) => api.post(path, body, { token });

  beforeAll(async () => {
    running = await (modes[0] as (typeof modes)[number]).start();
    api = createTestClient(running.base);
    ({ accessToken: token } = await api.signUp());
    ({
      organization: { id: organizationId },
    } = await api.onboard(token));
  }, 180_000);

  afterAll(async () => {
    await running?.stop();
  });

  // Every view read every version whole: 200 versions at the limit took pnpm start past its heap
  // bound on the next GET. The versions are listed by their summaries now. (Embedded only: its one
  // process held them all; FerretDB takes minutes to store 200 such versions.)
  it("reads and lists a prompt with 200 versions at the text limit", async () => {
    const prompt = await api.createPrompt(token, organizationId);
    const version = {
      systemPrompt: "s".repeat(LIMITS.promptTextChars),
      developerPrompt: "v".repeat(LIMITS.promptTextChars),
    };
    for (let i = 0; i < 200; i++) {
      const r = await post(`/api/prompts/${prompt.id}/versions`, version);
      expect(r.status, r.text.slice(0, 300)).toBe(201);
    }
    const read = await api.get<{ latestVersion: number; versions: unknown[]; version: { systemPrompt: string } }>(
      `/api/prompts/${prompt.id}`,
      { token },
    );
    expect(read.status, read.text.slice(0, 300)).toBe(200);
    expect(read.body.latestVersion).toBe(200);
    expect(read.body.versions).toHaveLength(200);
    expect(read.body.version.systemPrompt).toHaveLength(LIMITS.promptTextChars);
    const list = await api.get(`/api/prompts`, { token, query: { organizationId } });
    expect(list.status, list.text.slice(0, 300)).toBe(200);
    expect(running.exitCodes().every((code) => code === null)).toBe(true);
  }, 240_000);
});
