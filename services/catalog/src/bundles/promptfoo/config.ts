/** A promptfoo config read from YAML or JSON, and the small types and helpers the converter shares. */
import { createHash } from "node:crypto";
import { invalidArgument } from "@kiln/kit/errors";
import { parse as parseYaml } from "yaml";

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
export type JsonObject = { [k: string]: Json };

export const isObject = (v: unknown): v is JsonObject => typeof v === "object" && v !== null && !Array.isArray(v);
export const hash = (...parts: unknown[]) =>
  createHash("sha256").update(JSON.stringify(parts)).digest("hex").slice(0, 24);

/** Parses a promptfoo config given as YAML or JSON text, or already parsed. */
export function parsePromptfooConfig(config: unknown): JsonObject {
  let value = config;
  if (typeof config === "string") {
    try {
      value = parseYaml(config, { maxAliasCount: 100 });
    } catch (e) {
      throw invalidArgument("the promptfoo config is not YAML or JSON", [
        {
          field: "config",
          issue: e instanceof Error ? (e.message.split("\n")[0] ?? "does not parse") : "does not parse",
        },
      ]);
    }
  }
  if (!isObject(value)) {
    throw invalidArgument("a promptfoo config is an object", [
      { field: "config", issue: "must be an object (YAML or JSON)" },
    ]);
  }
  return value;
}

export interface PromptSource {
  label: string;
  system: string;
  developer: string | null;
  /** The prompt's own `config.response_format`, which wins over its providers' (as in promptfoo). */
  responseFormat?: JsonObject;
  at: string;
}

export interface ProviderSource {
  label: string;
  model: string;
  temperature: number | null;
  maxOutputTokens: number | null;
  responseFormat: JsonObject;
}
