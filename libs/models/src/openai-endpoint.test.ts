import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chatEndpointOf } from "./openai-endpoint.js";
import { createOpenAIProvider } from "./openai-provider.js";

describe("chatEndpointOf", () => {
  it("calls OpenAI at {base}/chat/completions with a Bearer key", () => {
    const e = chatEndpointOf({ apiKey: "k1", baseUrl: "https://api.example.com/v1/" });
    expect(e.urlFor("gpt-4o")).toBe("https://api.example.com/v1/chat/completions");
    expect(e.authHeaders).toEqual({ authorization: "Bearer k1" });
  });

  it("calls Azure OpenAI at the model's deployment with api-version and an api-key header", () => {
    const e = chatEndpointOf({
      apiKey: "k2",
      baseUrl: "https://acme.openai.azure.com",
      azure: { apiVersion: "2024-10-21", deployments: { "gpt-4o": "prod-4o" } },
    });
    expect(e.urlFor("gpt-4o")).toBe(
      "https://acme.openai.azure.com/openai/deployments/prod-4o/chat/completions?api-version=2024-10-21",
    );
    expect(e.urlFor("gpt-4.1")).toContain("/openai/deployments/gpt-4.1/chat/completions?");
    expect(e.authHeaders).toEqual({ "api-key": "k2" });
  });
});

describe("createOpenAIProvider with azure", () => {
  const seen: IncomingMessage[] = [];
  const server = createServer((req, res) => {
    seen.push(req);
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/json" }).end(
        JSON.stringify({
          id: "chatcmpl-1",
          object: "chat.completion",
          created: 0,
          model: "gpt-4o",
          choices: [
            {
              index: 0,
              message: { role: "assistant", content: "hi", refusal: null },
              finish_reason: "stop",
              logprobs: null,
            },
          ],
          usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
        }),
      );
    });
  });
  let base = "";
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("sends the call to the deployment with the api-key header and no Authorization", async () => {
    const provider = createOpenAIProvider({
      id: "azure-acme",
      apiKey: "azure-key-1",
      baseUrl: base,
      timeoutMs: 5_000,
      maxRetries: 0,
      azure: { apiVersion: "2024-10-21", deployments: { "gpt-4o": "prod-4o" } },
    });
    const result = await provider.generate({ model: "gpt-4o", messages: [{ role: "user", content: "hello" }] });
    expect(result.text).toBe("hi");
    expect(seen[0]?.url).toBe("/openai/deployments/prod-4o/chat/completions?api-version=2024-10-21");
    expect(seen[0]?.headers["api-key"]).toBe("azure-key-1");
    expect(seen[0]?.headers.authorization).toBeUndefined();
  });
});
