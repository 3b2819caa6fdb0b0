/**
 * The variables of the native providers (docs/configuration.md "The platform", docs/providers.md): Google Gemini
 * (GEMINI_API_KEY, GEMINI_BASE_URL) and AWS Bedrock (BEDROCK_REGION with the standard AWS
 * credential variables, BEDROCK_BASE_URL). A provider is available when its credentials are set;
 * its ids are reserved for it, never an OpenAI-compatible provider's.
 */
import { Type } from "@kiln/kit/config";
import type { ProvidersConfig } from "@kiln/models/registry";

export const NativeProvidersEnv = {
  GEMINI_API_KEY: Type.Optional(Type.String({ minLength: 1 })),
  /** Another address for the Gemini API (a proxy); default https://generativelanguage.googleapis.com. */
  GEMINI_BASE_URL: Type.Optional(Type.String({ minLength: 1 })),
  /** The AWS region of Bedrock, e.g. "us-east-1"; with the AWS credentials below, `bedrock/*` is available. */
  BEDROCK_REGION: Type.Optional(Type.String({ pattern: "^[a-z]{2}(-[a-z]+)+-\\d+$" })),
  AWS_ACCESS_KEY_ID: Type.Optional(Type.String({ minLength: 1 })),
  AWS_SECRET_ACCESS_KEY: Type.Optional(Type.String({ minLength: 1 })),
  AWS_SESSION_TOKEN: Type.Optional(Type.String({ minLength: 1 })),
  /** Another address for Bedrock Runtime; default https://bedrock-runtime.{region}.amazonaws.com. */
  BEDROCK_BASE_URL: Type.Optional(Type.String({ minLength: 1 })),
};

export const NATIVE_PROVIDER_IDS = ["gemini", "bedrock"];

type NativeVars = { [K in keyof typeof NativeProvidersEnv]?: string };

/** The native providers' part of ProvidersConfig; a problem (a bad URL, half the AWS credentials) goes to `problems`. */
export function nativeProvidersOf(vars: NativeVars, problems: string[]): Pick<ProvidersConfig, "gemini" | "bedrock"> {
  for (const name of ["GEMINI_BASE_URL", "BEDROCK_BASE_URL"] as const) {
    const url = vars[name];
    if (url !== undefined && !isHttpUrl(url)) problems.push(`${name} must be an http(s) URL`);
  }
  const { BEDROCK_REGION: region, AWS_ACCESS_KEY_ID: accessKeyId, AWS_SECRET_ACCESS_KEY: secretAccessKey } = vars;
  if (region !== undefined && (accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    problems.push("AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set together");
  }
  return {
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

/** The native providers with credentials here. */
export function configuredNativeProviders(providers: ProvidersConfig): string[] {
  return [...(providers.gemini?.apiKey ? ["gemini"] : []), ...(providers.bedrock ? ["bedrock"] : [])];
}

export function isHttpUrl(text: string): boolean {
  if (!URL.canParse(text)) return false;
  const { protocol } = new URL(text);
  return protocol === "http:" || protocol === "https:";
}
