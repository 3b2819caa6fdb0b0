/**
 * Client compatibility: LangChain JS (`@langchain/openai`'s ChatOpenAI with `@langchain/core`
 * messages and tools) against Kiln's Chat Completions on the embedded and the distributed platform
 * (docs/openai-compatible.md "Clients").
 */

import { stubReply } from "@kiln/testing/openai-stub";
import { type AIMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { ChatOpenAI } from "@langchain/openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { COMPAT_MODES, type CompatPlatform, startCompatPlatform } from "./harness.js";

// biome-ignore lint/suspicious/noExplicitAny: what the provider received is read loosely.
type Loose = any;

describe.each(COMPAT_MODES)("LangChain ChatOpenAI against the %s platform", (mode) => {
  let p: CompatPlatform;
  const chat = (prompt: string, fields: Partial<ConstructorParameters<typeof ChatOpenAI>[0] & object> = {}) =>
    new ChatOpenAI({
      model: `kiln/${prompt}`,
      apiKey: p.flow.apiKey,
      configuration: { baseURL: `${p.base}/v1` },
      // LangChain retries a 502 up to 6 times (its own retries, not the OpenAI SDK's): each retry
      // would be another run. See docs/openai-compatible.md "Clients".
      maxRetries: 0,
      ...fields,
    });

  beforeAll(async () => {
    p = await startCompatPlatform(mode);
  }, 120_000);
  afterAll(async () => p?.stop());

  it("sends a SystemMessage after the prompt's own system prompt, with temperature and stop", async () => {
    p.stub.script(stubReply.text("Bonjour"));
    const answer = await chat(p.prompts.free.name, { temperature: 0.4, stop: ["END"] }).invoke([
      new SystemMessage("Answer in French."),
      new HumanMessage("Hello"),
    ]);
    expect(answer.content).toBe("Bonjour");
    expect(answer.id).toMatch(/^[a-z]+_[0-9a-f]{32}$/);
    const sent = p.lastSent();
    expect(sent.messages).toEqual([
      { role: "system", content: "You are Kiln's helper." },
      { role: "system", content: "Answer in French." },
      { role: "user", content: "Hello" },
    ]);
    expect(sent).toMatchObject({ temperature: 0.4, stop: ["END"] });
  });

  it("bindTools: the tool call comes back, a ToolMessage continues the conversation", async () => {
    const lookup = tool(async ({ city }) => JSON.stringify({ city, tempC: -3 }), {
      name: "lookup",
      description: "Looks a city up",
      schema: z.object({ city: z.string() }),
    });
    const model = chat(p.prompts.tool.id).bindTools([lookup]);
    p.stub.script(stubReply.toolCalls([{ id: "call_l", name: "lookup", arguments: { city: "Oslo" } }]));
    const question = new HumanMessage("Trip to Oslo");
    const first = (await model.invoke([question])) as AIMessage;
    expect(first.tool_calls).toEqual([{ id: "call_l", name: "lookup", args: { city: "Oslo" }, type: "tool_call" }]);
    expect(p.lastSent().tools.map((t: Loose) => t.function.name)).toEqual([expect.stringMatching(/^tool_/), "lookup"]);

    const result = (await lookup.invoke(first.tool_calls?.[0] as never)) as ToolMessage;
    expect(result).toBeInstanceOf(ToolMessage);
    p.stub.script(stubReply.text("Oslo is cold"));
    const second = await model.invoke([question, first, result]);
    expect(second.content).toBe("Oslo is cold");
    expect(p.lastSent().messages.slice(1)).toEqual([
      { role: "user", content: "Trip to Oslo" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "call_l", type: "function", function: { name: "lookup", arguments: '{"city":"Oslo"}' } }],
      },
      { role: "tool", tool_call_id: "call_l", content: '{"city":"Oslo","tempC":-3}' },
    ]);
  });

  it("withStructuredOutput(zod) answers the parsed object", async () => {
    p.stub.script(stubReply.json({ summary: "short" }));
    const structured = chat(p.prompts.free.id).withStructuredOutput(z.object({ summary: z.string() }), {
      name: "summary",
      method: "jsonSchema",
    });
    expect(await structured.invoke("Summarize this")).toEqual({ summary: "short" });
    expect(p.lastSent().response_format).toMatchObject({
      type: "json_schema",
      json_schema: { name: "summary", schema: { type: "object", required: ["summary"] } },
    });
  });

  it("stream(): the chunks assemble to the stored run's output", async () => {
    p.stub.script(stubReply.text("Streamed through LangChain", { usage: { prompt_tokens: 2, completion_tokens: 3 } }));
    let text = "";
    let id = "";
    let usage: Loose;
    for await (const chunk of await chat(p.prompts.free.id).stream("Stream")) {
      text += chunk.content;
      id ||= chunk.id ?? "";
      usage = chunk.usage_metadata ?? usage;
    }
    expect(text).toBe("Streamed through LangChain");
    expect(usage).toMatchObject({ input_tokens: 2, output_tokens: 3 });
    const stored = await p.run(id);
    expect(stored.output).toEqual({ text });
  });

  it("sends variables through modelKwargs.metadata", async () => {
    p.stub.script(stubReply.text("ok"));
    const model = chat(p.prompts.greeting.name, {
      modelKwargs: { metadata: { variables: JSON.stringify({ person: "Ada" }) } },
    });
    await model.invoke("Hi");
    expect(p.lastSent().messages[0]).toEqual({ role: "system", content: "Help Ada." });
  });

  it("a provider failure is one stored failed run (maxRetries: 0), an unknown model a 404", async () => {
    const failedBefore = (await p.runs("failed")).length;
    p.stub.script(stubReply.error(400, { message: "bad request upstream" }));
    const error: Loose = await chat(p.prompts.free.id)
      .invoke("x")
      .then(
        () => null,
        (e) => e,
      );
    if (error?.status !== 502) throw error;
    const failed = await p.runs("failed");
    expect(failed.length).toBe(failedBefore + 1);
    expect(failed[0]?.id).toBe(error.headers.get("x-kiln-run-id"));

    const missing: Loose = await chat("no-such-prompt")
      .invoke("x")
      .then(
        () => null,
        (e) => e,
      );
    expect(missing?.status).toBe(404);
    expect(missing.code).toBe("model_not_found");
  });
});
