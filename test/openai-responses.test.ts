/**
 * The Responses API (`POST /v1/responses`, docs/openai-compatible.md "Responses API") called with
 * the real `openai` npm SDK, against the embedded and the distributed platform whose model is the
 * OpenAI stub (the stub shows what the provider received): plain input, instructions, variables,
 * json_schema output, the function_call round trip, streaming events, skills and errors.
 * The AI SDK and LangChain call the same route in openai-responses-clients.test.ts.
 */

import { stubReply } from "@kiln/testing/openai-stub";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type ResponsesPlatform, responsesModes, startResponsesPlatform } from "./support/openai-responses-fixture.js";

// biome-ignore lint/suspicious/noExplicitAny: SDK errors and events are read loosely and asserted on.
type Loose = any;

const RUN_ID = /^run_[0-9a-f]{32}$/;
const SCHEMA = {
  type: "object",
  properties: { summary: { type: "string" } },
  required: ["summary"],
  additionalProperties: false,
};
const LOOKUP = {
  type: "function" as const,
  name: "lookup",
  description: "Looks a city up",
  parameters: { type: "object", properties: { city: { type: "string" } } },
  strict: false,
};

const failure = (p: Promise<unknown>): Promise<Loose> =>
  p.then(
    () => null,
    (e: unknown) => e,
  );

describe.each(responsesModes)("OpenAI Responses API with the openai SDK in $name", (mode) => {
  let kiln: ResponsesPlatform;
  let openai: OpenAI;
  const variables = { person: "Ada" };

  beforeAll(async () => {
    kiln = await startResponsesPlatform(mode.name, { mongoUrl: inject("mongoUrl"), natsUrl: inject("natsUrl") });
    openai = new OpenAI({ apiKey: kiln.flow.apiKey, baseURL: `${kiln.base}/v1`, maxRetries: 0 });
  }, 120_000);

  afterAll(async () => {
    await kiln?.stop();
  });

  it("answers a plain string input as a response: run id, output text, usage, cost", async () => {
    kiln.stub.script(stubReply.text("Hello Ada", { usage: { prompt_tokens: 1_000_000, completion_tokens: 500_000 } }));
    const { data, response } = await openai.responses
      .create({
        model: `kiln/${kiln.prompt.name}`,
        input: "Hi",
        metadata: { variables: JSON.stringify(variables) },
      })
      .withResponse();
    expect(data).toMatchObject({ object: "response", status: "completed", model: `kiln/${kiln.prompt.name}` });
    expect(data.id).toMatch(RUN_ID);
    expect(response.headers.get("x-kiln-run-id")).toBe(data.id);
    expect(data.output_text).toBe("Hello Ada");
    expect(data.output).toEqual([
      {
        type: "message",
        id: `msg_${data.id}`,
        status: "completed",
        role: "assistant",
        content: [{ type: "output_text", text: "Hello Ada", annotations: [], logprobs: [] }],
      },
    ]);
    expect(data.usage).toMatchObject({ input_tokens: 1_000_000, output_tokens: 500_000, total_tokens: 1_500_000 });
    expect((data.usage as Loose).cost_usd).toBe(4);
    expect(response.headers.get("x-kiln-cost-usd")).toBe("4");
    expect(kiln.lastSent().messages).toEqual([
      { role: "system", content: "Help Ada." },
      { role: "developer", content: "Be brief." },
      { role: "user", content: "Hi" },
    ]);
    const stored = await kiln.storedRun(data.id);
    expect(stored).toMatchObject({ id: data.id, status: "succeeded", output: { text: "Hello Ada" } });
  });

  it("appends instructions and message items after the prompt's own messages; variables top-level too", async () => {
    kiln.stub.script(stubReply.text("Bonjour"));
    const data = await openai.responses.create({
      model: `kiln/${kiln.prompt.id}@production`,
      instructions: "Answer in French.",
      input: [
        { role: "developer", content: "No emojis." },
        { type: "message", role: "user", content: [{ type: "input_text", text: "Hello" }] },
        { type: "message", role: "assistant", content: [{ type: "output_text", text: "Hi!", annotations: [] }] },
        { role: "user", content: "Again" },
      ],
      variables: { person: "Grace" },
    } as never);
    expect((data as Loose).output_text).toBe("Bonjour");
    expect(kiln.lastSent().messages).toEqual([
      { role: "system", content: "Help Grace." },
      { role: "developer", content: "Be brief." },
      { role: "system", content: "Answer in French." },
      { role: "developer", content: "No emojis." },
      { role: "user", content: "Hello" },
      { role: "assistant", content: "Hi!" },
      { role: "user", content: "Again" },
    ]);
  });

  it("honours text.format json_schema: responses.parse gives the parsed output", async () => {
    kiln.stub.script(stubReply.json({ summary: "short" }));
    const data = await openai.responses.parse({
      model: `kiln/${kiln.prompt.id}`,
      input: "Summarize",
      metadata: { variables: JSON.stringify(variables) },
      text: { format: { type: "json_schema", name: "summary", schema: SCHEMA, strict: true } },
      temperature: 0.2,
      max_output_tokens: 50,
    });
    expect(data.output_parsed).toEqual({ summary: "short" });
    expect(kiln.lastSent()).toMatchObject({
      response_format: { type: "json_schema", json_schema: { name: "summary", schema: SCHEMA } },
      temperature: 0.2,
    });
    expect(kiln.lastSent().max_tokens ?? kiln.lastSent().max_completion_tokens).toBe(50);
  });

  it("answers a call to a caller's function tool as a function_call item and takes the round trip back", async () => {
    kiln.stub.script(stubReply.toolCalls([{ id: "call_1", name: "lookup", arguments: { city: "Oslo" } }]));
    const first = await openai.responses.create({
      model: `kiln/${kiln.prompt.id}`,
      input: "Trip to Oslo",
      metadata: { variables: JSON.stringify(variables) },
      tools: [LOOKUP],
      tool_choice: { type: "function", name: "lookup" },
      parallel_tool_calls: false,
    });
    expect(kiln.lastSent()).toMatchObject({
      tools: [{ type: "function", function: { name: "lookup", description: "Looks a city up" } }],
      tool_choice: { type: "function", function: { name: "lookup" } },
      parallel_tool_calls: false,
    });
    const call = { id: "fc_call_1", call_id: "call_1", name: "lookup", arguments: '{"city":"Oslo"}' };
    expect(first.output).toEqual([{ type: "function_call", ...call, status: "completed" }]);
    expect(first.output_text).toBe("");

    kiln.stub.script(stubReply.text("Oslo is cold"));
    const second = await openai.responses.create({
      model: `kiln/${kiln.prompt.id}`,
      input: [
        { role: "user", content: "Trip to Oslo" },
        ...(first.output as OpenAI.Responses.ResponseInputItem[]),
        { type: "function_call_output", call_id: "call_1", output: '{"tempC":-3}' },
      ],
      metadata: { variables: JSON.stringify(variables) },
      tools: [LOOKUP],
    });
    expect(second.output_text).toBe("Oslo is cold");
    expect(kiln.lastSent().messages.slice(2)).toEqual([
      { role: "user", content: "Trip to Oslo" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "call_1", type: "function", function: { name: "lookup", arguments: '{"city":"Oslo"}' } }],
      },
      { role: "tool", tool_call_id: "call_1", content: '{"tempC":-3}' },
    ]);
  });

  it("streams the Responses events; the text equals the stored run's output", async () => {
    kiln.stub.script(stubReply.text("Streamed answer for Ada"));
    const stream = await openai.responses.create({
      model: `kiln/${kiln.prompt.name}`,
      input: "Hi",
      metadata: { variables: JSON.stringify(variables) },
      stream: true,
    });
    const events: Loose[] = [];
    for await (const event of stream) events.push(event);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    // The text arrives in the pieces the provider streams (the stub sends several): one delta each.
    const deltas = events.filter((e) => e.type === "response.output_text.delta");
    expect(deltas.length).toBeGreaterThan(1);
    const types = events
      .map((e) => e.type)
      .filter((t, i, all) => t !== "response.output_text.delta" || all[i - 1] !== t);
    expect(types).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
    const text = events.flatMap((e) => (e.type === "response.output_text.delta" ? [e.delta] : [])).join("");
    const completed = events.at(-1).response;
    expect(completed.id).toMatch(RUN_ID);
    expect(events[0].response).toMatchObject({ id: completed.id, status: "in_progress" });
    expect(completed.usage.total_tokens).toBeGreaterThan(0);
    const stored = await kiln.storedRun(completed.id);
    expect(stored.status).toBe("succeeded");
    expect(text).toBe(stored.output.text);
    expect(text).toBe("Streamed answer for Ada");
    // The SDK's stream helper puts the same events together into the final response.
    kiln.stub.script(stubReply.toolCalls([{ id: "call_9", name: "lookup", arguments: { city: "Rome" } }]));
    const helper = openai.responses.stream({
      model: `kiln/${kiln.prompt.name}`,
      input: "Rome",
      metadata: { variables: JSON.stringify(variables) },
      tools: [LOOKUP],
    });
    const argumentsDone: string[] = [];
    helper.on("response.function_call_arguments.done", (e) => argumentsDone.push(e.arguments));
    const final = await helper.finalResponse();
    expect(argumentsDone).toEqual(['{"city":"Rome"}']);
    expect(final.output).toMatchObject([{ type: "function_call", call_id: "call_9", name: "lookup" }]);
  });

  it("runs a skill as kiln/skill/<name>, its input from the variables", async () => {
    kiln.stub.script(stubReply.text("skill answer"));
    const data = await openai.responses.create({
      model: `kiln/skill/${kiln.skill.name}`,
      variables: { person: "Ada" },
    } as never);
    expect((data as Loose).id).toMatch(/^srun_[0-9a-f]{32}$/);
    expect((data as Loose).output_text).toBe("skill answer");
    const error = await failure(
      openai.responses.create({
        model: `kiln/skill/${kiln.skill.name}`,
        variables: { person: "Ada" },
        temperature: 0.5,
      } as never),
    );
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.param).toBe("temperature");
  });

  it("answers 404 model_not_found for an unknown prompt or label", async () => {
    for (const model of ["kiln/no such prompt", `kiln/${kiln.prompt.id}@staging`, "gpt-4o"]) {
      const error = await failure(openai.responses.create({ model, input: "Hi" }));
      expect(error).toBeInstanceOf(OpenAI.NotFoundError);
      expect(error.code).toBe("model_not_found");
      expect(error.param).toBe("model");
    }
  });

  it("refuses what it cannot honour with 400 naming the field, and runs nothing", async () => {
    const sent = kiln.stub.requests.length;
    const model = `kiln/${kiln.prompt.id}`;
    const cases: [Record<string, unknown>, string][] = [
      [{ previous_response_id: "resp_1" }, "previous_response_id"],
      [{ include: ["reasoning.encrypted_content"] }, "include"],
      [{ truncation: "auto" }, "truncation"],
      [{ reasoning: { effort: "high" } }, "reasoning.effort"],
      [{ user: "u1" }, "user"],
      [{ service_tier: "flex" }, "service_tier"],
      [{ text: { verbosity: "low" } }, "text.verbosity"],
      [{ tools: [{ type: "web_search" }] }, "tools[0].type"],
      [{ tools: [{ ...LOOKUP, strict: true }] }, "tools[0].strict"],
      [{ input: [{ type: "item_reference", id: "msg_run_1" }] }, "input[0].id"],
      [{ input: [{ type: "reasoning", id: "rs_1", summary: [] }] }, "input[0].type"],
      [{ input: [{ role: "user", content: [{ type: "input_image", image_url: "x" }] }] }, "input[0].content[0]"],
      [{ input: [{ type: "function_call_output", call_id: "call_x", output: "{}" }] }, "input[0].call_id"],
      [{ temperature: 5 }, "temperature"],
      [{ variables: {} }, "variables.person"],
    ];
    for (const [fields, param] of cases) {
      const error = await failure(
        openai.responses.create({ model, input: "Hi", variables, ...fields } as never, { maxRetries: 0 }),
      );
      expect(error, param).toBeInstanceOf(OpenAI.BadRequestError);
      expect(error.type).toBe("invalid_request_error");
      expect(error.param, JSON.stringify(fields)).toBe(param);
    }
    expect(kiln.stub.requests.length).toBe(sent);
  });

  it("a provider failure answers x-should-retry: false: the SDK's default retries make one stored failed run", async () => {
    const retrying = new OpenAI({ apiKey: kiln.flow.apiKey, baseURL: `${kiln.base}/v1` });
    const failedBefore = await kiln.failedRuns();
    const sent = kiln.stub.requests.length;
    kiln.stub.script(stubReply.error(400, { message: "bad request upstream" }));
    const error = await failure(
      retrying.responses.create({
        model: `kiln/${kiln.prompt.id}`,
        input: "Hi",
        metadata: { variables: JSON.stringify(variables) },
      }),
    );
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(error.status).toBe(502);
    expect(error.headers.get("x-should-retry")).toBe("false");
    const runId = error.headers.get("x-kiln-run-id");
    expect(error.error).toMatchObject({ type: "api_error", should_retry: false, kiln_run_id: runId });
    expect(kiln.stub.requests.length).toBe(sent + 1);
    expect(await kiln.failedRuns()).toBe(failedBefore + 1);
    expect((await kiln.storedRun(runId)).status).toBe("failed");
  });
});
