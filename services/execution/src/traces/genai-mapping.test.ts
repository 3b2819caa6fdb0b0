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
