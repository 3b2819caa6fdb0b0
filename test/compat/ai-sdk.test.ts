/**
 * Client compatibility: the Vercel AI SDK 6 (`ai`) with its two Chat Completions providers,
 * `@ai-sdk/openai-compatible` (createOpenAICompatible) and `@ai-sdk/openai`'s `.chat(…)` model,
 * against the embedded and the distributed platform (docs/openai-compatible.md "Clients").
 * The AI SDK's default `openai("…")` model calls the Responses API, which is not this suite's.
 */
import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { stubReply } from "@kiln/testing/openai-stub";
import { APICallError, generateText, type LanguageModel, Output, stepCountIs, streamText, tool } from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { COMPAT_MODES, type CompatPlatform, startCompatPlatform } from "./harness.js";

// biome-ignore lint/suspicious/noExplicitAny: what the provider received is read loosely.
type Loose = any;

interface Client {
  name: string;
  model(p: CompatPlatform, prompt: string): LanguageModel;
  /** The stock way this provider sends Kiln's variables. */
  variables(values: Record<string, string>): Record<string, Record<string, Loose>>;
}

const CLIENTS: Client[] = [
  {
    name: "@ai-sdk/openai-compatible",
    model: (p, prompt) =>
      createOpenAICompatible({
        name: "kiln",
        baseURL: `${p.base}/v1`,
        apiKey: p.flow.apiKey,
        includeUsage: true,
        supportsStructuredOutputs: true,
      }).chatModel(`kiln/${prompt}`),
    // Keys under providerOptions.<provider name> that are not its own options go into the body.
    variables: (values) => ({ kiln: { variables: values } }),
  },
  {
    name: "@ai-sdk/openai .chat()",
    model: (p, prompt) => createOpenAI({ baseURL: `${p.base}/v1`, apiKey: p.flow.apiKey }).chat(`kiln/${prompt}`),
    // The provider's own `metadata` option: string values, so the variables as JSON text.
    variables: (values) => ({ openai: { metadata: { variables: JSON.stringify(values) } } }),
  },
];

const CASES = COMPAT_MODES.flatMap((mode) => CLIENTS.map((client) => ({ mode, client })));

describe.each(COMPAT_MODES)("Vercel AI SDK against the %s platform", (mode) => {
  let p: CompatPlatform;

  beforeAll(async () => {
    p = await startCompatPlatform(mode);
  }, 120_000);
  afterAll(async () => p?.stop());

  describe.each(CASES.filter((c) => c.mode === mode))("$client.name", ({ client }) => {
    it("generateText with system: sends it after the prompt's own system prompt", async () => {
      p.stub.script(stubReply.text("Bonjour", { usage: { prompt_tokens: 4, completion_tokens: 1 } }));
      const result = await generateText({
        model: client.model(p, p.prompts.free.name),
        system: "Answer in French.",
        prompt: "Hello",
        temperature: 0.1,
        maxOutputTokens: 20,
        maxRetries: 0,
      });
      expect(result.text).toBe("Bonjour");
      expect(result.usage).toMatchObject({ inputTokens: 4, outputTokens: 1 });
      const sent = p.lastSent();
      expect(sent.messages).toEqual([
        { role: "system", content: "You are Kiln's helper." },
        { role: "system", content: "Answer in French." },
        { role: "user", content: "Hello" },
      ]);
      expect(sent.temperature).toBe(0.1);
      expect(sent.max_tokens ?? sent.max_completion_tokens).toBe(20);
    });

    it("runs a tool with execute: the tool call round trip through Kiln", async () => {
      p.stub.script(
        stubReply.toolCalls([{ id: "call_w", name: "weather", arguments: { city: "Oslo" } }]),
        stubReply.text("It is -3 in Oslo."),
      );
      const seen: string[] = [];
      const result = await generateText({
        model: client.model(p, p.prompts.free.id),
        prompt: "Weather in Oslo?",
        tools: {
          weather: tool({
            description: "The weather in a city",
            inputSchema: z.object({ city: z.string() }),
            execute: async ({ city }) => {
              seen.push(city);
              return { city, tempC: -3 };
            },
          }),
        },
        stopWhen: stepCountIs(3),
        maxRetries: 0,
      });
      expect(seen).toEqual(["Oslo"]);
      expect(result.text).toBe("It is -3 in Oslo.");
      expect(result.steps).toHaveLength(2);
      const sent = p.lastSent();
      expect(sent.tools.map((t: Loose) => t.function.name)).toEqual(["weather"]);
      const [, , assistant, toolMessage] = sent.messages;
      expect(assistant).toMatchObject({
        role: "assistant",
        tool_calls: [{ id: "call_w", type: "function", function: { name: "weather", arguments: '{"city":"Oslo"}' } }],
      });
      expect(toolMessage).toEqual({ role: "tool", tool_call_id: "call_w", content: '{"city":"Oslo","tempC":-3}' });
    });

    it("streamText streams the text, equal to the stored run's output", async () => {
      p.stub.script(stubReply.text("Streamed through the AI SDK"));
      const result = streamText({ model: client.model(p, p.prompts.free.id), prompt: "Stream", maxRetries: 0 });
      let text = "";
      for await (const part of result.textStream) text += part;
      expect(text).toBe("Streamed through the AI SDK");
      const runId = (await result.response).id;
      const stored = await p.run(runId);
      expect(stored.status).toBe("succeeded");
      expect(stored.output).toEqual({ text });
    });

    it("Output.object with a zod schema: the schema reaches the provider, the object comes back", async () => {
      p.stub.script(stubReply.json({ summary: "short" }));
      const result = await generateText({
        model: client.model(p, p.prompts.free.id),
        prompt: "Summarize this",
        output: Output.object({ schema: z.object({ summary: z.string() }) }),
        maxRetries: 0,
      });
      expect(result.output).toEqual({ summary: "short" });
      expect(p.lastSent().response_format).toMatchObject({
        type: "json_schema",
        json_schema: { schema: { type: "object", properties: { summary: { type: "string" } }, required: ["summary"] } },
      });
    });

    it("sends variables through providerOptions", async () => {
      p.stub.script(stubReply.text("ok"));
      await generateText({
        model: client.model(p, p.prompts.greeting.name),
        prompt: "Hi",
        providerOptions: client.variables({ person: "Ada" }),
        maxRetries: 0,
      });
      expect(p.lastSent().messages[0]).toEqual({ role: "system", content: "Help Ada." });
    });

    it("a provider failure is a 502 naming one stored failed run (with maxRetries: 0)", async () => {
      const failedBefore = (await p.runs("failed")).length;
      const sentBefore = p.stub.requests.length;
      p.stub.script(stubReply.error(400, { message: "bad request upstream" }));
      const error = await generateText({
        model: client.model(p, p.prompts.free.id),
        prompt: "x",
        maxRetries: 0,
      }).then(
        () => null,
        (e: Loose) => e,
      );
      expect(APICallError.isInstance(error)).toBe(true);
      expect(error.statusCode).toBe(502);
      expect(error.responseHeaders["x-should-retry"]).toBe("false");
      expect(p.stub.requests.length).toBe(sentBefore + 1);
      const failed = await p.runs("failed");
      expect(failed.length).toBe(failedBefore + 1);
      expect(failed[0]?.id).toBe(error.responseHeaders["x-kiln-run-id"]);
    });

    it("the AI SDK ignores x-should-retry: its default retries run a failed call again (documented)", async () => {
      const failedBefore = (await p.runs("failed")).length;
      p.stub.script(stubReply.error(400, { message: "bad request upstream" }), stubReply.text("second try"));
      // The default maxRetries (2) retries any 5xx: the retry is a second run, which succeeds here.
      const result = await generateText({ model: client.model(p, p.prompts.free.id), prompt: "x" });
      expect(result.text).toBe("second try");
      expect((await p.runs("failed")).length).toBe(failedBefore + 1);
    }, 20_000);
  });
});
