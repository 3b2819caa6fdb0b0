/**
 * The Responses API (`POST /v1/responses`, docs/openai-compatible.md "Responses API") as the
 * clients that default to it call it, unchanged but for the base URL and model name: the AI SDK 6
 * (`@ai-sdk/openai`'s default model) and LangChain JS (`ChatOpenAI` with `useResponsesApi`), their
 * published packages, against the embedded and the distributed platform whose model is the
 * OpenAI stub. The variables travel in OpenAI's `metadata` (`metadata.variables`).
 */

import { createOpenAI } from "@ai-sdk/openai";
import { stubReply } from "@kiln/testing/openai-stub";
import { HumanMessage, SystemMessage } from "@langchain/core/messages";
import { ChatOpenAI } from "@langchain/openai";
import { generateText, jsonSchema, stepCountIs, streamText, tool } from "ai";
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import { type ResponsesPlatform, responsesModes, startResponsesPlatform } from "./support/openai-responses-fixture.js";

// biome-ignore lint/suspicious/noExplicitAny: the clients' request bodies are read loosely and asserted on.
type Loose = any;

const RUN_ID = /^run_[0-9a-f]{32}$/;
const metadata = { variables: JSON.stringify({ person: "Ada" }) };

describe.each(responsesModes)("OpenAI Responses API with the AI SDK and LangChain in $name", (mode) => {
  let kiln: ResponsesPlatform;
  /** The prompt's own messages, before what the caller sends. */
  const promptMessages = [
    { role: "system", content: "Help Ada." },
    { role: "developer", content: "Be brief." },
  ];

  beforeAll(async () => {
    kiln = await startResponsesPlatform(mode.name, { mongoUrl: inject("mongoUrl"), natsUrl: inject("natsUrl") });
  }, 120_000);

  beforeEach(() => {
    called = [];
    bodies = [];
  });

  afterAll(async () => {
    await kiln?.stop();
  });

  /** The URLs the client called, by its own fetch: the route it took. */
  let called: string[] = [];
  /** The JSON bodies the client sent. */
  let bodies: Loose[] = [];
  const recording: typeof fetch = (url, init) => {
    called.push(String(url));
    if (typeof init?.body === "string") bodies.push(JSON.parse(init.body));
    return fetch(url, init);
  };
  const lastCalled = () => called.at(-1)?.replace(kiln.base, "");

  const aiSdkModel = () =>
    createOpenAI({ baseURL: `${kiln.base}/v1`, apiKey: kiln.flow.apiKey, fetch: recording })(
      `kiln/${kiln.prompt.name}`,
    );

  it("AI SDK: generateText with the default (Responses) model and a system prompt", async () => {
    kiln.stub.script(stubReply.text("Bonjour Ada"));
    const result = await generateText({
      model: aiSdkModel(),
      system: "Answer in French.",
      prompt: "Hello",
      maxRetries: 0,
      providerOptions: { openai: { metadata } },
    });
    expect(result.text).toBe("Bonjour Ada");
    expect(result.response.id).toMatch(RUN_ID);
    expect(result.usage.inputTokens).toBeGreaterThan(0);
    expect(lastCalled()).toBe("/v1/responses");
    expect(kiln.lastSent().messages).toEqual([
      ...promptMessages,
      { role: "system", content: "Answer in French." },
      { role: "user", content: "Hello" },
    ]);
  });

  it("AI SDK: streamText returns the whole text, the stored run's output", async () => {
    kiln.stub.script(stubReply.text("A streamed answer"));
    const result = streamText({
      model: aiSdkModel(),
      prompt: "Hello",
      maxRetries: 0,
      providerOptions: { openai: { metadata } },
    });
    const text = await result.text;
    expect(text).toBe("A streamed answer");
    expect(lastCalled()).toBe("/v1/responses");
    const response = await result.response;
    expect(response.id).toMatch(RUN_ID);
    expect((await kiln.storedRun(response.id)).output.text).toBe(text);
    expect((await result.usage).outputTokens).toBeGreaterThan(0);
  });

  it("AI SDK: a tool call, executed by the caller and sent back (the function_call round trip)", async () => {
    kiln.stub.script(
      stubReply.toolCalls([{ id: "call_1", name: "lookup", arguments: { city: "Oslo" } }]),
      stubReply.text("Oslo is cold"),
    );
    const result = await generateText({
      model: aiSdkModel(),
      prompt: "Trip to Oslo",
      maxRetries: 0,
      providerOptions: { openai: { metadata } },
      tools: {
        lookup: tool({
          description: "Looks a city up",
          inputSchema: jsonSchema<{ city: string }>({ type: "object", properties: { city: { type: "string" } } }),
          execute: async ({ city }) => ({ city, tempC: -3 }),
        }),
      },
      stopWhen: stepCountIs(2),
    });
    expect(result.steps[0]?.toolCalls).toMatchObject([
      { toolCallId: "call_1", toolName: "lookup", input: { city: "Oslo" } },
    ]);
    expect(result.text).toBe("Oslo is cold");
    expect(called.map((url) => url.replace(kiln.base, ""))).toEqual(["/v1/responses", "/v1/responses"]);
    expect(kiln.lastSent().messages.slice(2)).toEqual([
      { role: "user", content: "Trip to Oslo" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "call_1", type: "function", function: { name: "lookup", arguments: '{"city":"Oslo"}' } }],
      },
      { role: "tool", tool_call_id: "call_1", content: '{"city":"Oslo","tempC":-3}' },
    ]);
  });

  it("AI SDK: the next turn sends the earlier answer as an item_reference, read back from the stored run", async () => {
    kiln.stub.script(stubReply.text("First answer"), stubReply.text("Second answer"));
    const options = { model: aiSdkModel(), maxRetries: 0, providerOptions: { openai: { metadata } } };
    const first = await generateText({ ...options, prompt: "Question one" });
    const second = await generateText({
      ...options,
      messages: [
        { role: "user", content: "Question one" },
        ...first.response.messages,
        { role: "user", content: "Question two" },
      ],
    });
    expect(second.text).toBe("Second answer");
    // The AI SDK (store on by default) referred to the first answer by its item id.
    expect(bodies.at(-1).input).toContainEqual({ type: "item_reference", id: `msg_${first.response.id}` });
    expect(kiln.lastSent().messages.slice(2)).toEqual([
      { role: "user", content: "Question one" },
      { role: "assistant", content: "First answer" },
      { role: "user", content: "Question two" },
    ]);
  });

  const langChain = () =>
    new ChatOpenAI({
      model: `kiln/${kiln.prompt.name}`,
      useResponsesApi: true,
      apiKey: kiln.flow.apiKey,
      configuration: { baseURL: `${kiln.base}/v1`, fetch: recording },
      maxRetries: 0,
      modelKwargs: { metadata },
    });

  it("LangChain: invoke with a SystemMessage through useResponsesApi", async () => {
    kiln.stub.script(stubReply.text("Bonjour"));
    const answer = await langChain().invoke([new SystemMessage("Answer in French."), new HumanMessage("Hello")]);
    expect(answer.text).toBe("Bonjour");
    expect(lastCalled()).toBe("/v1/responses");
    expect(answer.id ?? answer.response_metadata.id).toMatch(/^(run|msg_run)_[0-9a-f]{32}$/);
    expect(answer.usage_metadata?.total_tokens).toBeGreaterThan(0);
    expect(kiln.lastSent().messages).toEqual([
      ...promptMessages,
      { role: "system", content: "Answer in French." },
      { role: "user", content: "Hello" },
    ]);
  });

  it("LangChain: stream through useResponsesApi gives the whole text", async () => {
    kiln.stub.script(stubReply.text("Streamed by LangChain"));
    let text = "";
    for await (const chunk of await langChain().stream([new HumanMessage("Hello")])) text += chunk.text;
    expect(text).toBe("Streamed by LangChain");
    expect(lastCalled()).toBe("/v1/responses");
  });
});
