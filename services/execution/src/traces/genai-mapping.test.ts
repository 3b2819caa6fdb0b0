import { createModelCatalog } from "@kiln/models/catalog";
import { describe, expect, it } from "vitest";
import { generationOf, sessionOf, toolCallOfSpan, userOf } from "./genai-mapping.js";

// The attribute names OpenLLMetry (traceloop), Langfuse and the AI SDK 7's runtime context write;
// the end-to-end mapping with the instrumentation packages is test/traces-genai*.test.ts.
describe("session, user, tool and finish-reason sources", () => {
  const models = createModelCatalog({ configuredProviders: ["openai"] });

  it("reads OpenLLMetry association properties, Langfuse and ai.settings.context as session and user", () => {
    const traceloop = {
      "traceloop.association.properties.session_id": "s-tl",
      "traceloop.association.properties.user_id": "u-tl",
    };
    expect([sessionOf(traceloop), userOf(traceloop)]).toEqual(["s-tl", "u-tl"]);
    const langfuse = { "langfuse.session.id": "s-lf", "langfuse.user.id": "u-lf" };
    expect([sessionOf(langfuse), userOf(langfuse)]).toEqual(["s-lf", "u-lf"]);
    const ai7 = { "ai.settings.context.sessionId": "s-ai", "ai.settings.context.userId": "u-ai" };
    expect([sessionOf(ai7), userOf(ai7)]).toEqual(["s-ai", "u-ai"]);
  });

  it("takes an OpenLLMetry span as a tool call only when its kind is tool", () => {
    const entity = {
      "traceloop.entity.name": "get_weather",
      "traceloop.entity.input": '{"city":"Oslo"}',
      "traceloop.entity.output": '{"temp":3}',
    };
    expect(toolCallOfSpan({ ...entity, "traceloop.span.kind": "task" })).toBeNull();
    expect(toolCallOfSpan({ ...entity, "traceloop.span.kind": "tool" })).toMatchObject({
      name: "get_weather",
      arguments: '{"city":"Oslo"}',
      result: '{"temp":3}',
    });
  });

  it("reads OpenInference's embedding.model_name and llm.finish_reason", () => {
    expect(generationOf({ "embedding.model_name": "text-embedding-3-small" }, [], models)).toMatchObject({
      requestModel: "text-embedding-3-small",
      provider: "openai",
    });
    expect(generationOf({ "llm.model_name": "gpt-4o", "llm.finish_reason": "length" }, [], models)).toMatchObject({
      finishReasons: ["length"],
    });
  });
});

describe("the price of a generation, each token class at its own price", () => {
  const models = createModelCatalog({ configuredProviders: ["openai"] });
  const span = (usage: Record<string, number>) => ({
    "gen_ai.operation.name": "chat",
    "gen_ai.provider.name": "openai",
    "gen_ai.request.model": "gpt-4o-mini",
    ...usage,
  });

  it("prices cache reads at the cached-input price and reasoning inside the output tokens", () => {
    const generation = generationOf(
      span({
        "gen_ai.usage.input_tokens": 2_000,
        "gen_ai.usage.cache_read.input_tokens": 1_500,
        "gen_ai.usage.output_tokens": 400,
        "gen_ai.usage.reasoning.output_tokens": 100,
      }),
      [],
      models,
    );
    expect(generation).toMatchObject({ cacheReadInputTokens: 1_500, reasoningTokens: 100 });
    // gpt-4o-mini: 500 · 0.15 + 1500 · 0.075 + 400 · 0.6, per million.
    expect(generation?.costUsd).toBeCloseTo((500 * 0.15 + 1_500 * 0.075 + 400 * 0.6) / 1e6, 15);
  });

  it("takes counts whose parts exceed their whole as excluding them (a provider's own semantics passed on)", () => {
    // Anthropic-style: input_tokens 100 without the 1500 read from the cache; Gemini-style: 40 candidates without 60 thoughts.
    const generation = generationOf(
      span({
        "gen_ai.usage.input_tokens": 100,
        "gen_ai.usage.cache_read.input_tokens": 1_500,
        "gen_ai.usage.output_tokens": 40,
        "gen_ai.usage.reasoning.output_tokens": 60,
      }),
      [],
      models,
    );
    expect(generation?.costUsd).toBeCloseTo((100 * 0.15 + 1_500 * 0.075 + 100 * 0.6) / 1e6, 15);
  });
});
