/** The providers of a promptfoo config as model settings Kiln has (or the fallback model, reported). */
import { isObject, type Json, type JsonObject, type ProviderSource } from "./config.js";

export interface ModelCatalog {
  /** Model ids this deployment offers ("openai/gpt-4o-mini"). */
  ids: readonly string[];
  /** Where a provider maps to no model here. */
  fallback: string;
}

/** promptfoo's provider id → a Kiln model id ("openai:chat:gpt-4o" → "openai/gpt-4o"). */
export function modelIdOf(providerId: string): string {
  if (providerId === "echo") return "local/echo";
  const parts = providerId.split(":");
  const provider = parts[0] ?? "";
  const model =
    parts.length > 2 && ["chat", "messages", "completion", "responses"].includes(parts[1] ?? "")
      ? parts.slice(2).join(":")
      : parts.slice(1).join(":");
  return `${provider}/${model}`;
}

/**
 * A `config.response_format` (a provider's or a prompt's) as Kiln's response format: a JSON schema,
 * or `json_object` as a schema of any object; undefined when none is given, or (reported) when it
 * is one Kiln has no equivalent for.
 */
export function responseFormatOf(rf: Json | undefined, at: string, warnings: string[]): JsonObject | undefined {
  if (rf === undefined) return undefined;
  if (isObject(rf) && rf.type === "json_schema" && isObject(rf.json_schema) && isObject(rf.json_schema.schema)) {
    return {
      type: "json_schema",
      ...(typeof rf.json_schema.name === "string" && { name: rf.json_schema.name }),
      schema: rf.json_schema.schema,
    };
  }
  if (isObject(rf) && rf.type === "json_object") return { type: "json_schema", schema: { type: "object" } };
  if (isObject(rf) && rf.type === "text") return { type: "text" };
  warnings.push(`${at}: config.response_format is not imported (Kiln takes a json_schema or json_object)`);
  return undefined;
}

export function providersOf(config: JsonObject, models: ModelCatalog, warnings: string[]): ProviderSource[] {
  const raw = config.providers ?? config.targets;
  const list: { value: Json; at: string }[] = [];
  if (typeof raw === "string") list.push({ value: raw, at: "providers" });
  else if (Array.isArray(raw)) list.push(...raw.map((value, i) => ({ value, at: `providers[${i}]` })));
  const out: ProviderSource[] = [];
  for (const { value, at } of list) {
    const id =
      typeof value === "string" ? value : isObject(value) && typeof value.id === "string" ? value.id : undefined;
    if (!id) {
      warnings.push(`${at}: a provider without an id; skipped`);
      continue;
    }
    const options = isObject(value) && isObject(value.config) ? value.config : {};
    const wanted = modelIdOf(id);
    let model = wanted;
    if (!models.ids.includes(wanted)) {
      model = models.fallback;
      warnings.push(`${at}: ${id} is not a model here; its versions use ${models.fallback}`);
    }
    const temperature = typeof options.temperature === "number" ? options.temperature : null;
    const maxTokens = options.max_tokens ?? options.max_completion_tokens ?? options.max_output_tokens;
    const responseFormat = responseFormatOf(options.response_format, at, warnings) ?? { type: "text" };
    for (const key of Object.keys(options)) {
      if (!["temperature", "max_tokens", "max_completion_tokens", "max_output_tokens", "response_format"].includes(key))
        warnings.push(`${at}: config.${key} is not imported`);
    }
    const label = isObject(value) && typeof value.label === "string" ? value.label : id;
    out.push({
      label,
      model,
      temperature,
      maxOutputTokens: typeof maxTokens === "number" && Number.isInteger(maxTokens) ? maxTokens : null,
      responseFormat,
    });
  }
  if (out.length === 0) {
    warnings.push(`providers: none given; the prompts use ${models.fallback}`);
    out.push({
      label: models.fallback,
      model: models.fallback,
      temperature: null,
      maxOutputTokens: null,
      responseFormat: { type: "text" },
    });
  }
  return out;
}

/** A grader provider (`openai:gpt-4o`, `{id}`) as the judge's model here; undefined (reported) when there is none. */
export function graderModelOf(models: ModelCatalog, warnings: string[]) {
  return (provider: Json, at: string): string | undefined => {
    const id = typeof provider === "string" ? provider : isObject(provider) ? provider.id : undefined;
    if (typeof id !== "string") {
      warnings.push(`${at}: the grader provider has no id; the judge uses Kiln's default model`);
      return undefined;
    }
    const model = modelIdOf(id);
    if (models.ids.includes(model)) return model;
    warnings.push(`${at}: the grader ${id} is not a model here; the judge uses Kiln's default model`);
    return undefined;
  };
}
