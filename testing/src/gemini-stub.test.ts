/**
 * The Gemini stub against the official `@google/genai` SDK: what the SDK sends, the stub takes
 * (its checks refuse nothing the SDK builds), and what the stub answers, the SDK reads (text,
 * function calls, streamed chunks, usage, errors), so the stub's wire is Gemini's as the SDK knows it.
 */
import { ApiError, FunctionCallingConfigMode, GoogleGenAI } from "@google/genai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type GeminiStub, geminiReply, startGeminiStub } from "./gemini-stub.js";

const API_KEY = "AIza-test-0123456789";
let stub: GeminiStub;

beforeAll(async () => {
  stub = await startGeminiStub({ apiKey: API_KEY });
});
afterAll(() => stub.close());
beforeEach(() => stub.reset());

const client = (apiKey = API_KEY) =>
  new GoogleGenAI({
    apiKey,
    httpOptions: { baseUrl: stub.baseUrl, apiVersion: "v1beta", retryOptions: { attempts: 1 } },
  });

describe("the Gemini stub, read by @google/genai", () => {
  it("answers generateContent with text and usage, taking the SDK's request with config", async () => {
    stub.script(
      geminiReply.text("Sunny.", { usage: { promptTokenCount: 12, candidatesTokenCount: 2, thoughtsTokenCount: 5 } }),
    );
    const response = await client().models.generateContent({
      model: "gemini-2.5-flash",
      contents: "Weather in Paris?",
      config: {
        systemInstruction: "Be terse.",
        temperature: 0.1,
        maxOutputTokens: 64,
        thinkingConfig: { thinkingBudget: 128 },
        responseMimeType: "application/json",
        responseJsonSchema: { type: "object", properties: { sky: { type: "string" } } },
      },
    });
    expect(response.text).toBe("Sunny.");
    expect(response.candidates?.[0]?.finishReason).toBe("STOP");
    expect(response.usageMetadata).toMatchObject({
      promptTokenCount: 12,
      candidatesTokenCount: 2,
      thoughtsTokenCount: 5,
      totalTokenCount: 19,
    });
    const [sent] = stub.requests;
    expect(sent?.path).toBe("/v1beta/models/gemini-2.5-flash:generateContent");
    expect(sent?.headers["x-goog-api-key"]).toBe(API_KEY);
    expect(sent?.body.systemInstruction.parts[0].text).toBe("Be terse.");
    expect(sent?.body.generationConfig).toMatchObject({ temperature: 0.1, thinkingConfig: { thinkingBudget: 128 } });
  });

  it("answers function calls, and takes the SDK's function-response turn", async () => {
    stub.script(geminiReply.calls([{ name: "lookup", args: { city: "Paris" } }]), geminiReply.text("21 °C"));
    const ai = client();
    const config = {
      tools: [{ functionDeclarations: [{ name: "lookup", parametersJsonSchema: { type: "object" } }] }],
      toolConfig: { functionCallingConfig: { mode: FunctionCallingConfigMode.ANY, allowedFunctionNames: ["lookup"] } },
    };
    const first = await ai.models.generateContent({ model: "gemini-2.5-flash", contents: "Paris?", config });
    expect(first.functionCalls).toEqual([{ name: "lookup", args: { city: "Paris" } }]);
    const second = await ai.models.generateContent({
      model: "gemini-2.5-flash",
      contents: [
        { role: "user", parts: [{ text: "Paris?" }] },
        first.candidates?.[0]?.content ?? {},
        { role: "user", parts: [{ functionResponse: { name: "lookup", response: { tempC: 21 } } }] },
      ],
      config,
    });
    expect(second.text).toBe("21 °C");
    expect(stub.requests[1]?.body.toolConfig.functionCallingConfig).toEqual({
      mode: "ANY",
      allowedFunctionNames: ["lookup"],
    });
  });

  it("streams server-sent chunks the SDK reads one by one, the usage and finish reason in the last", async () => {
    stub.script(geminiReply.text("one two three", { usage: { promptTokenCount: 4, candidatesTokenCount: 3 } }));
    const chunks = [];
    for await (const chunk of await client().models.generateContentStream({
      model: "gemini-2.5-pro",
      contents: "count",
    })) {
      chunks.push(chunk);
    }
    expect(chunks.map((c) => c.text)).toEqual(["one ", "two ", "three"]);
    expect(chunks.at(-1)?.candidates?.[0]?.finishReason).toBe("STOP");
    expect(chunks.at(-1)?.usageMetadata?.candidatesTokenCount).toBe(3);
    expect(stub.requests[0]?.path).toBe("/v1beta/models/gemini-2.5-pro:streamGenerateContent");
    expect(stub.requests[0]?.query.alt).toBe("sse");
  });

  it("fails as the API does: a wrong key, a refused body, a rate limit", async () => {
    const wrongKey = await client("AIza-wrong")
      .models.generateContent({ model: "gemini-2.5-flash", contents: "x" })
      .catch((e) => e);
    expect(wrongKey).toBeInstanceOf(ApiError);
    expect((wrongKey as ApiError).status).toBe(400);
    expect((wrongKey as ApiError).message).toContain("API key not valid");

    // allowedFunctionNames outside mode ANY: the API refuses it, the SDK does not check.
    const refused = await client()
      .models.generateContent({
        model: "gemini-2.5-flash",
        contents: "x",
        config: {
          tools: [{ functionDeclarations: [{ name: "lookup" }] }],
          toolConfig: {
            functionCallingConfig: { mode: FunctionCallingConfigMode.AUTO, allowedFunctionNames: ["lookup"] },
          },
        },
      })
      .catch((e) => e);
    expect((refused as ApiError).status).toBe(400);
    expect((refused as ApiError).message).toContain("INVALID_ARGUMENT");

    stub.script(geminiReply.rateLimited({ retryDelay: "7s" }));
    const limited = await client()
      .models.generateContent({ model: "gemini-2.5-flash", contents: "x" })
      .catch((e) => e);
    expect((limited as ApiError).status).toBe(429);
    expect((limited as ApiError).message).toContain("RESOURCE_EXHAUSTED");
  });

  it("lists models in pages the SDK's pager follows (pageSize, pageToken, nextPageToken)", async () => {
    const paged = await startGeminiStub({
      apiKey: API_KEY,
      pageCap: 2,
      models: [{ id: "gemini-a" }, { id: "gemini-b" }, { id: "embed-c", methods: ["embedContent"] }],
    });
    try {
      const sdk = new GoogleGenAI({
        apiKey: API_KEY,
        httpOptions: { baseUrl: paged.baseUrl, apiVersion: "v1beta", retryOptions: { attempts: 1 } },
      });
      const pager = await sdk.models.list({ config: { pageSize: 5 } });
      const seen: { name?: string; supportedActions?: string[] }[] = [];
      for await (const model of pager) seen.push(model);
      expect(seen.map((m) => m.name)).toEqual(["models/gemini-a", "models/gemini-b", "models/embed-c"]);
      expect(seen[0]?.supportedActions).toContain("generateContent");
      expect(seen[2]?.supportedActions).toEqual(["embedContent"]);
      expect(paged.requests.map((r) => [r.method, r.path, r.query.pageSize, r.query.pageToken !== undefined])).toEqual([
        ["GET", "/v1beta/models", "5", false],
        ["GET", "/v1beta/models", "5", true],
      ]);
      const bad = await fetch(`${paged.baseUrl}/v1beta/models?pageToken=nonsense`, {
        headers: { "x-goog-api-key": API_KEY },
      });
      expect(bad.status).toBe(400);
      const wrongKey = await fetch(`${paged.baseUrl}/v1beta/models`, { headers: { "x-goog-api-key": "AIza-wrong" } });
      expect(wrongKey.status).toBe(400);
      expect(JSON.stringify(await wrongKey.json())).toContain("API_KEY_INVALID");
    } finally {
      await paged.close();
    }
  });
});
