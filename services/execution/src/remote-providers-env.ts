/**
 * The variables of the providers Kiln reaches by their own protocol (docs/configuration.md "The
 * platform", docs/providers.md): OpenAI and Anthropic (`<PROVIDER>_API_KEY`, `<PROVIDER>_BASE_URL`),
 * Google Gemini (GEMINI_API_KEY, GEMINI_BASE_URL) and AWS Bedrock (BEDROCK_REGION with the
 * standard AWS credential variables, BEDROCK_BASE_URL). A provider is available when its
 * credentials are set; its id is reserved for it, never an OpenAI-compatible provider's.
 */
import { Type } from "@kiln/kit/config";
import type { ProvidersConfig } from "@kiln/models/registry";

const Value = Type.Optional(Type.String({ minLength: 1 }));

export const RemoteProvidersEnv = {
  OPENAI_API_KEY: Value,
  /** Another address for OpenAI (a proxy); default https://api.openai.com/v1. */
  OPENAI_BASE_URL: Value,
  ANTHROPIC_API_KEY: Value,
  /** Another address for Anthropic; default https://api.anthropic.com (with or without /v1). */
  ANTHROPIC_BASE_URL: Value,
  GEMINI_API_KEY: Value,
  /** Another address for the Gemini API (a proxy); default https://generativelanguage.googleapis.com. */
  GEMINI_BASE_URL: Value,
  /** The AWS region of Bedrock, e.g. "us-east-1"; with the AWS credentials below, `bedrock/*` is available. */
  BEDROCK_REGION: Type.Optional(Type.String({ pattern: "^[a-z]{2}(-[a-z]+)+-\\d+$" })),
  AWS_ACCESS_KEY_ID: Value,
  AWS_SECRET_ACCESS_KEY: Value,
  AWS_SESSION_TOKEN: Value,
  /** Another address for Bedrock Runtime; default https://bedrock-runtime.{region}.amazonaws.com. */
  BEDROCK_BASE_URL: Value,
};

export const REMOTE_PROVIDER_IDS = ["openai", "anthropic", "gemini", "bedrock"];

type Vars = { [K in keyof typeof RemoteProvidersEnv]?: string };

type RemoteProviders = Pick<ProvidersConfig, "openai" | "anthropic" | "gemini" | "bedrock">;

/** The remote providers' part of ProvidersConfig; a problem (a bad URL, half the AWS credentials) goes to `problems`, named, its value never shown. */
export function remoteProvidersOf(vars: Vars, problems: string[]): RemoteProviders {
  for (const name of ["OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "GEMINI_BASE_URL", "BEDROCK_BASE_URL"] as const) {
    const url = vars[name];
    if (url !== undefined && !isHttpUrl(url)) problems.push(`${name} must be an http(s) URL`);
  }
  const { BEDROCK_REGION: region, AWS_ACCESS_KEY_ID: accessKeyId, AWS_SECRET_ACCESS_KEY: secretAccessKey } = vars;
  if (region !== undefined && (accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    problems.push("AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set together");
  }
  return {
    openai: { apiKey: vars.OPENAI_API_KEY, baseUrl: vars.OPENAI_BASE_URL },
    anthropic: { apiKey: vars.ANTHROPIC_API_KEY, baseUrl: vars.ANTHROPIC_BASE_URL },
    ...(vars.GEMINI_API_KEY !== undefined
      ? { gemini: { apiKey: vars.GEMINI_API_KEY, baseUrl: vars.GEMINI_BASE_URL } }
      : {}),
    ...(region !== undefined && accessKeyId !== undefined && secretAccessKey !== undefined
      ? {
          bedrock: {
            region,
            accessKeyId,
            secretAccessKey,
            sessionToken: vars.AWS_SESSION_TOKEN,
            baseUrl: vars.BEDROCK_BASE_URL,
          },
        }
      : {}),
  };
}

/** The remote providers with credentials here, in REMOTE_PROVIDER_IDS order. */
export function configuredRemoteProviders(providers: ProvidersConfig): string[] {
  return [
    ...(providers.openai.apiKey ? ["openai"] : []),
    ...(providers.anthropic?.apiKey ? ["anthropic"] : []),
    ...(providers.gemini?.apiKey ? ["gemini"] : []),
    ...(providers.bedrock ? ["bedrock"] : []),
  ];
}

export function isHttpUrl(text: string): boolean {
  if (!URL.canParse(text)) return false;
  const { protocol } = new URL(text);
  return protocol === "http:" || protocol === "https:";
}
