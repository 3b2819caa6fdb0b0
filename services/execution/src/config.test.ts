import { describe, expect, it } from "vitest";
import { configuredProviders, loadConfig, loadProvidersConfig, loadToolsConfig } from "./config.js";

const SERVICE_ENV = {
  MONGODB_URL: "mongodb://127.0.0.1:27017",
  INTERNAL_AUTH_SECRET: "x".repeat(32),
  NATS_URL: "nats://127.0.0.1:4222",
  IDENTITY_URL: "http://127.0.0.1:7001",
  CATALOG_URL: "http://127.0.0.1:7002",
};

const GOOD = JSON.stringify([
  {
    id: "ollama",
    baseUrl: "http://127.0.0.1:11434/v1",
    developerRole: false,
    models: [
      { model: "llama3.1", inputPerMTokUsd: 0, outputPerMTokUsd: 0, tools: true, jsonSchema: true },
      { model: "qwen2.5", inputPerMTokUsd: null },
      { model: "qwq", inputPerMTokUsd: 1, outputPerMTokUsd: 2, cachedInputPerMTokUsd: 0.1, reasoningPerMTokUsd: 3 },
    ],
  },
  {
    id: "groq",
    baseUrl: "https://api.groq.com/openai/v1",
    apiKeyEnv: "GROQ_API_KEY",
    maxTokensParam: "max_completion_tokens",
    models: [{ model: "llama-3.3-70b" }],
  },
  { id: "vllm", baseUrl: "http://10.0.0.5:8000/v1", apiKey: "vllm-secret-key", models: [{ model: "mistral" }] },
]);

function problemsOf(env: Record<string, string>): string {
  try {
    loadProvidersConfig(env);
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error("expected a configuration error");
}

describe("loadProvidersConfig", () => {
  it("has defaults: local/echo, 60 s, 2 retries, no compatible providers", () => {
    expect(loadProvidersConfig({})).toEqual({
      openai: { apiKey: undefined, baseUrl: undefined },
      anthropic: { apiKey: undefined, baseUrl: undefined },
      compatible: [],
      defaultModel: "local/echo",
      timeoutMs: 60_000,
      maxRetries: 2,
      concurrency: {},
      tokensPerMinute: {},
    });
  });

  it("reads MODEL_TOKENS_PER_MINUTE, and refuses anything but model ids to limits in range", () => {
    const env = { MODEL_TOKENS_PER_MINUTE: '{"openai/gpt-4o": 400000, "anthropic/*": 80000}' };
    expect(loadProvidersConfig(env).tokensPerMinute).toEqual({ "openai/gpt-4o": 400_000, "anthropic/*": 80_000 });
    expect(problemsOf({ MODEL_TOKENS_PER_MINUTE: "{" })).toContain("MODEL_TOKENS_PER_MINUTE is not valid JSON");
    expect(problemsOf({ MODEL_TOKENS_PER_MINUTE: '{"gpt-4o": 1}' })).toContain("MODEL_TOKENS_PER_MINUTE key");
    for (const bad of ["0", "1.5", "1000000001", '"many"'])
      expect(problemsOf({ MODEL_TOKENS_PER_MINUTE: `{"openai/gpt-4o": ${bad}}` })).toContain("MODEL_TOKENS_PER_MINUTE");
  });

  it("reads MODEL_CONCURRENCY, and refuses anything but model ids to positive counts", () => {
    expect(loadProvidersConfig({ MODEL_CONCURRENCY: '{"openai/gpt-4o": 8, "ollama/*": 2}' }).concurrency).toEqual({
      "openai/gpt-4o": 8,
      "ollama/*": 2,
    });
    expect(problemsOf({ MODEL_CONCURRENCY: "{8" })).toContain("MODEL_CONCURRENCY is not valid JSON");
    expect(problemsOf({ MODEL_CONCURRENCY: "[1]" })).toContain("MODEL_CONCURRENCY must be an object");
    expect(problemsOf({ MODEL_CONCURRENCY: '{"gpt-4o": 8}' })).toContain("MODEL_CONCURRENCY");
    expect(problemsOf({ MODEL_CONCURRENCY: '{"openai/gpt-4o": 0}' })).toContain("MODEL_CONCURRENCY");
  });

  it("reads the OpenAI variables and the numbers", () => {
    const config = loadProvidersConfig({
      OPENAI_API_KEY: "sk-abc",
      OPENAI_BASE_URL: "https://proxy.example.com/v1",
      DEFAULT_MODEL: "openai/gpt-4o-mini",
      PROVIDER_TIMEOUT_MS: "15000",
      PROVIDER_MAX_RETRIES: "0",
    });
    expect(config).toMatchObject({
      openai: { apiKey: "sk-abc", baseUrl: "https://proxy.example.com/v1" },
      defaultModel: "openai/gpt-4o-mini",
      timeoutMs: 15_000,
      maxRetries: 0,
    });
  });

  it("parses OPENAI_COMPATIBLE_PROVIDERS, reading apiKeyEnv from the environment", () => {
    const config = loadProvidersConfig({ OPENAI_COMPATIBLE_PROVIDERS: GOOD, GROQ_API_KEY: "gsk_live" });
    expect(config.compatible).toEqual([
      {
        id: "ollama",
        baseUrl: "http://127.0.0.1:11434/v1",
        apiKey: undefined,
        requiresApiKey: false,
        developerRole: false,
        maxTokensParam: undefined,
        models: [
          { model: "llama3.1", inputPerMTokUsd: 0, outputPerMTokUsd: 0, tools: true, jsonSchema: true },
          { model: "qwen2.5", inputPerMTokUsd: null },
          { model: "qwq", inputPerMTokUsd: 1, outputPerMTokUsd: 2, cachedInputPerMTokUsd: 0.1, reasoningPerMTokUsd: 3 },
        ],
      },
      {
        id: "groq",
        baseUrl: "https://api.groq.com/openai/v1",
        apiKey: "gsk_live",
        requiresApiKey: true,
        developerRole: undefined,
        maxTokensParam: "max_completion_tokens",
        models: [{ model: "llama-3.3-70b" }],
      },
      {
        id: "vllm",
        baseUrl: "http://10.0.0.5:8000/v1",
        apiKey: "vllm-secret-key",
        requiresApiKey: true,
        developerRole: undefined,
        maxTokensParam: undefined,
        models: [{ model: "mistral" }],
      },
    ]);
    const withoutGroqKey = loadProvidersConfig({ OPENAI_COMPATIBLE_PROVIDERS: GOOD });
    expect(withoutGroqKey.compatible[1]).toMatchObject({ id: "groq", apiKey: undefined, requiresApiKey: true });
    expect(configuredProviders({ providers: withoutGroqKey })).toEqual(["ollama", "vllm"]);
  });

  it("refuses text that is not JSON without echoing it", () => {
    const message = problemsOf({ OPENAI_COMPATIBLE_PROVIDERS: '[{"apiKey":"sk-leak"' });
    expect(message).toBe("invalid configuration: OPENAI_COMPATIBLE_PROVIDERS is not valid JSON");
  });

  it("reports shape errors by path, never a value", () => {
    const message = problemsOf({
      OPENAI_COMPATIBLE_PROVIDERS: JSON.stringify([
        {
          id: "Bad Id",
          baseUrl: "http://h/v1",
          apiKey: "sk-do-not-show",
          models: [{ model: 7, inputPerMTokUsd: -1, cachedInputPerMTokUsd: "cheap" }],
          colour: "red",
        },
        { id: "ok", baseUrl: "http://h/v1", maxTokensParam: "max", models: [] },
      ]),
    });
    expect(message).toContain('OPENAI_COMPATIBLE_PROVIDERS[0].id must match pattern "^[a-z0-9][a-z0-9_-]{0,31}$"');
    expect(message).toContain("OPENAI_COMPATIBLE_PROVIDERS[0].colour is not a known field");
    expect(message).toContain("OPENAI_COMPATIBLE_PROVIDERS[0].models[0].model must be string");
    expect(message).toContain("OPENAI_COMPATIBLE_PROVIDERS[0].models[0].inputPerMTokUsd must be >= 0 or must be null");
    expect(message).toContain("OPENAI_COMPATIBLE_PROVIDERS[0].models[0].cachedInputPerMTokUsd must be number");
    expect(message).toContain(
      "OPENAI_COMPATIBLE_PROVIDERS[1].maxTokensParam must be one of max_completion_tokens, max_tokens",
    );
    expect(message).toContain("OPENAI_COMPATIBLE_PROVIDERS[1].models must");
    expect(message).not.toContain("sk-do-not-show");
    expect(problemsOf({ OPENAI_COMPATIBLE_PROVIDERS: '{"id":"x"}' })).toBe(
      "invalid configuration: OPENAI_COMPATIBLE_PROVIDERS must be array",
    );
  });

  it("refuses reserved and repeated ids, repeated models, two key sources and bad addresses", () => {
    const model = [{ model: "m" }];
    const message = problemsOf({
      OPENAI_BASE_URL: "not a url",
      OPENAI_COMPATIBLE_PROVIDERS: JSON.stringify([
        { id: "openai", baseUrl: "http://h/v1", models: model },
        { id: "a", baseUrl: "ftp://h/v1", models: [{ model: "m" }, { model: "m" }] },
        { id: "a", baseUrl: "http://h/v1", apiKey: "k", apiKeyEnv: "K", models: model },
      ]),
    });
    expect(message).toBe(
      [
        "invalid configuration: OPENAI_BASE_URL must be an http(s) URL",
        'OPENAI_COMPATIBLE_PROVIDERS[0].id "openai" is reserved',
        "OPENAI_COMPATIBLE_PROVIDERS[1].baseUrl must be an http(s) URL",
        'OPENAI_COMPATIBLE_PROVIDERS[1].models[1].model "m" is listed twice',
        'OPENAI_COMPATIBLE_PROVIDERS[2].id "a" is listed twice',
        "OPENAI_COMPATIBLE_PROVIDERS[2] has both apiKey and apiKeyEnv",
      ].join("; "),
    );
  });

  it("refuses bad numbers and model ids", () => {
    expect(problemsOf({ PROVIDER_TIMEOUT_MS: "soon" })).toContain("PROVIDER_TIMEOUT_MS");
    expect(problemsOf({ PROVIDER_MAX_RETRIES: "11" })).toContain("PROVIDER_MAX_RETRIES");
    expect(problemsOf({ DEFAULT_MODEL: "echo" })).toContain("DEFAULT_MODEL");
  });
});

describe("loadConfig", () => {
  it("adds the providers to the service's variables", () => {
    const config = loadConfig({ ...SERVICE_ENV, OPENAI_API_KEY: "sk-abc" });
    expect(config.PORT).toBe(7003);
    expect(config.providers.openai.apiKey).toBe("sk-abc");
    expect(configuredProviders(config)).toEqual(["openai"]);
  });
});

describe("loadToolsConfig", () => {
  it("reads the host variables with kit's one loader: canonical patterns, not the text", () => {
    const tools = loadToolsConfig({
      HTTP_TOOL_ALLOWED_HOSTS: "API.example.com. *.Bücher.example\n127.1",
      HTTP_TOOL_ALLOWED_HOSTS_BY_ORG: '{"org_1": ["[0:0::1]"]}',
      HTTP_TOOL_PRIVATE_HOSTS: "127.1 , localhost",
    });
    expect(tools.allowlist).toEqual({
      hosts: ["api.example.com", "*.xn--bcher-kva.example", "127.0.0.1"],
      byOrganization: new Map([["org_1", ["[::1]"]]]),
    });
    expect(tools.allowPrivateFor).toEqual(["127.0.0.1", "localhost"]);
  });

  it("fails at start-up naming the variable and the entry", () => {
    expect(() => loadToolsConfig({ HTTP_TOOL_PRIVATE_HOSTS: "*.10.0.0.1" })).toThrow(
      /^invalid configuration: HTTP_TOOL_PRIVATE_HOSTS: "\*\.10\.0\.0\.1" is a wildcard over an IP address/,
    );
    expect(() => loadConfig({ ...SERVICE_ENV, HTTP_TOOL_ALLOWED_HOSTS: "api.example.com:443" })).toThrow(
      'invalid configuration: HTTP_TOOL_ALLOWED_HOSTS: "api.example.com:443" is not a host pattern',
    );
  });
});
