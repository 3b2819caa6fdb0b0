import { describe, expect, it } from "vitest";
import { configuredProviders, loadProvidersConfig } from "./config.js";

describe("loadProvidersConfig: the remote providers", () => {
  it("makes gemini available with GEMINI_API_KEY, at GEMINI_BASE_URL when set", () => {
    const providers = loadProvidersConfig({ GEMINI_API_KEY: "AIza-x", GEMINI_BASE_URL: "http://127.0.0.1:9/" });
    expect(providers.gemini).toEqual({ apiKey: "AIza-x", baseUrl: "http://127.0.0.1:9/" });
    expect(configuredProviders({ providers })).toEqual(["gemini"]);
    expect(loadProvidersConfig({}).gemini).toBeUndefined();
  });

  it("makes bedrock available with BEDROCK_REGION and both AWS keys", () => {
    const providers = loadProvidersConfig({
      BEDROCK_REGION: "us-east-1",
      AWS_ACCESS_KEY_ID: "AKIDEXAMPLE",
      AWS_SECRET_ACCESS_KEY: "secret",
      AWS_SESSION_TOKEN: "token",
    });
    expect(providers.bedrock).toEqual({
      region: "us-east-1",
      accessKeyId: "AKIDEXAMPLE",
      secretAccessKey: "secret",
      sessionToken: "token",
      baseUrl: undefined,
    });
    expect(configuredProviders({ providers })).toEqual(["bedrock"]);
    expect(loadProvidersConfig({ AWS_ACCESS_KEY_ID: "a", AWS_SECRET_ACCESS_KEY: "b" }).bedrock).toBeUndefined();
  });

  it("refuses bad URLs, half the AWS credentials and the remote providers' ids for compatible providers, without values", () => {
    const error = String(
      (() => {
        try {
          loadProvidersConfig({
            GEMINI_BASE_URL: "ftp://x",
            BEDROCK_REGION: "eu-west-3",
            AWS_ACCESS_KEY_ID: "AKIDSECRETISH",
            OPENAI_COMPATIBLE_PROVIDERS: JSON.stringify([
              { id: "gemini", baseUrl: "http://x", models: [{ model: "m" }] },
            ]),
          });
        } catch (e) {
          return e;
        }
      })(),
    );
    expect(error).toContain("GEMINI_BASE_URL must be an http(s) URL");
    expect(error).toContain("AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set together");
    expect(error).toContain('OPENAI_COMPATIBLE_PROVIDERS[0].id "gemini" is reserved');
    expect(error).not.toContain("AKIDSECRETISH");
    expect(() => loadProvidersConfig({ BEDROCK_REGION: "not a region" })).toThrow(/BEDROCK_REGION/);
  });
});
