/**
 * The variables of the providers Kiln reaches by their own protocol, one pair each:
 * `<PROVIDER>_API_KEY` (the key; set, it makes `<provider>/*` available) and `<PROVIDER>_BASE_URL`
 * (another address, a proxy; default the provider's public one). docs/configuration.md lists them.
 */
import { Type } from "@kiln/kit/config";

const Key = Type.Optional(Type.String({ minLength: 1 }));

export const RemoteProvidersEnv = {
  OPENAI_API_KEY: Key,
  /** Default https://api.openai.com/v1. */
  OPENAI_BASE_URL: Key,
  ANTHROPIC_API_KEY: Key,
  /** Default https://api.anthropic.com (with or without /v1). */
  ANTHROPIC_BASE_URL: Key,
};

type Vars = Partial<Record<keyof typeof RemoteProvidersEnv, string>>;

/** One provider's pair; a base URL that is not http(s) is a problem (named, never shown). */
export function remoteProviderOf(vars: Vars, prefix: "OPENAI" | "ANTHROPIC", problems: string[]) {
  const baseUrl = vars[`${prefix}_BASE_URL`];
  if (baseUrl !== undefined && !isHttpUrl(baseUrl)) problems.push(`${prefix}_BASE_URL must be an http(s) URL`);
  return { apiKey: vars[`${prefix}_API_KEY`], baseUrl };
}

export function isHttpUrl(text: string): boolean {
  if (!URL.canParse(text)) return false;
  const { protocol } = new URL(text);
  return protocol === "http:" || protocol === "https:";
}
