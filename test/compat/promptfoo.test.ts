/**
 * Client compatibility: promptfoo as a client of Kiln's Chat Completions (its node API,
 * `promptfoo.evaluate`), against the embedded and the distributed platform
 * (docs/openai-compatible.md "Clients"). The provider under test is `openai:chat:kiln/<prompt>`
 * with `apiBaseUrl` at Kiln; the llm-rubric grader is a Kiln prompt too (promptfoo's grader sends
 * a system message). promptfoo keeps its state under a temporary PROMPTFOO_CONFIG_DIR, without
 * its cache (each platform must be called) and without telemetry.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stubReply } from "@kiln/testing/openai-stub";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COMPAT_MODES, type CompatPlatform, startCompatPlatform } from "./harness.js";

// biome-ignore lint/suspicious/noExplicitAny: promptfoo's results are read loosely and asserted on.
type Loose = any;

const configDir = mkdtempSync(join(tmpdir(), "kiln-promptfoo-"));
Object.assign(process.env, {
  PROMPTFOO_CONFIG_DIR: configDir,
  PROMPTFOO_CACHE_ENABLED: "false",
  PROMPTFOO_DISABLE_TELEMETRY: "1",
  PROMPTFOO_DISABLE_UPDATE: "1",
  PROMPTFOO_DISABLE_REDTEAM_REMOTE_GENERATION: "1",
});
const { default: promptfoo } = await import("promptfoo");

afterAll(() => rmSync(configDir, { recursive: true, force: true }));

describe.each(COMPAT_MODES)("promptfoo evaluate() against the %s platform", (mode) => {
  let p: CompatPlatform;
  const provider = (prompt: string, config: Record<string, unknown> = {}) => ({
    id: `openai:chat:kiln/${prompt}`,
    config: { apiBaseUrl: `${p.base}/v1`, apiKey: p.flow.apiKey, ...config },
  });

  beforeAll(async () => {
    p = await startCompatPlatform(mode);
  }, 120_000);
  afterAll(async () => p?.stop());

  it("evaluates a Kiln prompt with openai:chat: equals and an llm-rubric graded by Kiln", async () => {
    p.stub.script(stubReply.text("Paris"), stubReply.json({ reason: "It names the capital.", pass: true, score: 1 }));
    const summary: Loose = await promptfoo.evaluate(
      {
        prompts: ["{{question}}"],
        providers: [provider(p.prompts.free.name)],
        tests: [
          {
            vars: { question: "Capital of France?" },
            assert: [
              { type: "equals", value: "Paris" },
              { type: "llm-rubric", value: "Names the capital of France", provider: provider(p.prompts.free.id) },
            ],
          },
        ],
      },
      { maxConcurrency: 1, cache: false },
    );
    const [result] = summary.results;
    expect(result.error ?? null).toBeNull();
    expect(result.response.output).toBe("Paris");
    expect(result.gradingResult.componentResults.map((r: Loose) => [r.assertion.type, r.pass])).toEqual([
      ["equals", true],
      ["llm-rubric", true],
    ]);
    expect(result.success).toBe(true);
    // The answer's request: promptfoo's rendered prompt as the user message.
    const asked = p.stub.requests.at(-2)?.body;
    expect(asked.messages).toEqual([
      { role: "system", content: "You are Kiln's helper." },
      { role: "user", content: "Capital of France?" },
    ]);
    // The grader's request: promptfoo's rubric system message after the prompt's own.
    const grading = p.lastSent().messages;
    expect(grading[0]).toEqual({ role: "system", content: "You are Kiln's helper." });
    expect(grading[1].role).toBe("system");
    expect(grading.at(-1).content).toContain("Names the capital of France");
  });

  it("sends the variables of a prompt through config.metadata", async () => {
    p.stub.script(stubReply.text("Hello Ada"));
    const summary: Loose = await promptfoo.evaluate(
      {
        prompts: ["Hi"],
        providers: [provider(p.prompts.greeting.id, { metadata: { variables: '{"person":"Ada"}' } })],
        tests: [{ assert: [{ type: "contains", value: "Ada" }] }],
      },
      { maxConcurrency: 1, cache: false },
    );
    expect(summary.results[0].success).toBe(true);
    expect(p.lastSent().messages[0]).toEqual({ role: "system", content: "Help Ada." });
  });

  it("openai:chat gives no cost for a kiln/ model: promptfoo prices from its own table (documented)", async () => {
    p.stub.script(stubReply.text("Paris"));
    const summary: Loose = await promptfoo.evaluate(
      {
        prompts: ["{{question}}"],
        providers: [provider(p.prompts.free.id)],
        tests: [{ vars: { question: "Capital?" }, assert: [{ type: "cost", threshold: 1 }] }],
      },
      { maxConcurrency: 1, cache: false },
    );
    expect(summary.results[0].success).toBe(false);
    expect(summary.results[0].error).toContain("Cost assertion does not support providers that do not return cost");
  });

  it("the cost assertion on Kiln's usage.cost_usd, through promptfoo's http provider", async () => {
    // 1M prompt tokens at $2 and 0.5M completion tokens at $4 per million: $4.
    p.stub.script(stubReply.text("Paris", { usage: { prompt_tokens: 1_000_000, completion_tokens: 500_000 } }));
    const summary: Loose = await promptfoo.evaluate(
      {
        prompts: ["{{question}}"],
        providers: [
          {
            id: `${p.base}/v1/chat/completions`,
            config: {
              method: "POST",
              headers: { authorization: `Bearer ${p.flow.apiKey}`, "content-type": "application/json" },
              body: { model: `kiln/${p.prompts.free.id}`, messages: [{ role: "user", content: "{{prompt}}" }] },
              transformResponse: "({ output: json.choices[0].message.content, cost: json.usage.cost_usd })",
            },
          },
        ],
        tests: [
          {
            vars: { question: "Capital of France?" },
            assert: [
              { type: "equals", value: "Paris" },
              { type: "cost", threshold: 4.5 },
            ],
          },
          {
            vars: { question: "Capital of France?" },
            assert: [{ type: "cost", threshold: 3.5 }],
          },
        ],
      },
      { maxConcurrency: 1, cache: false },
    );
    // The second run's usage is the stub's default (a few tokens): cost far below 3.5.
    expect(summary.results.map((r: Loose) => [r.response.cost, r.success])).toEqual([
      [4, true],
      [expect.any(Number), true],
    ]);
    expect(summary.results[1].response.cost).toBeLessThan(0.001);
  });
});
