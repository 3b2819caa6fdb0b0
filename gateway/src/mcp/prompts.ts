import type { Client } from "@connectrpc/connect";
import { includeKey, partialLookupOf } from "@kiln/contracts/partials";
import type { PartialLookup } from "@kiln/contracts/prompt-template";
import { renderPromptTemplate } from "@kiln/kit/templates";
import type { CatalogService, Prompt, PromptVersion } from "@kiln/proto/catalog";
import {
  ErrorCode,
  type GetPromptResult,
  type ListPromptsResult,
  McpError,
  type PromptArgument,
} from "@modelcontextprotocol/sdk/types.js";
import { labelsOfEach } from "../http/catalog-labels.js";
import { callOptions, type McpCaller } from "./caller.js";
import { listedFor, objectSchemaOf } from "./lists.js";

/** A prompt as MCP offers it: a published version, or the version a label points at (`name@label`). */
interface OfferedPrompt {
  name: string;
  prompt: Prompt;
  versionId: string;
}

/** The organization's prompts with a published version, and with `promptLabels` their labelled versions. */
async function offeredPrompts(catalog: Client<typeof CatalogService>, caller: McpCaller): Promise<OfferedPrompt[]> {
  const options = callOptions(caller);
  const prompts = await listedFor(caller, ["prompts:read"], async (request, o) => {
    const { prompts: items, nextCursor } = await catalog.listPrompts(request, o);
    return { items, nextCursor };
  });
  const offered: OfferedPrompt[] = [];
  for (const prompt of prompts) {
    if (prompt.publishedVersionId) offered.push({ name: prompt.name, prompt, versionId: prompt.publishedVersionId });
  }
  if (caller.promptLabels.length === 0) return offered;
  const labelsOf = await labelsOfEach(
    catalog,
    "prompt",
    prompts.map((p) => p.id),
    options,
  );
  for (const prompt of prompts) {
    for (const label of labelsOf.get(prompt.id) ?? []) {
      if (caller.promptLabels.includes(label.label)) {
        offered.push({ name: `${prompt.name}@${label.label}`, prompt, versionId: label.versionId });
      }
    }
  }
  return offered;
}

/** The version's variables as prompt arguments: names, descriptions, required. */
function argumentsOf(version: PromptVersion | undefined): PromptArgument[] {
  const schema = objectSchemaOf(version?.content?.variablesSchema?.json);
  const properties = (schema?.properties ?? {}) as Record<string, { description?: unknown }>;
  const required = Array.isArray(schema?.required) ? schema.required : [];
  return Object.entries(properties).map(([name, property]) => ({
    name,
    ...(typeof property?.description === "string" ? { description: property.description } : {}),
    required: required.includes(name),
  }));
}

export async function listPrompts(
  catalog: Client<typeof CatalogService>,
  caller: McpCaller,
): Promise<ListPromptsResult> {
  const offered = await offeredPrompts(catalog, caller);
  const versions = await Promise.all(offered.map((o) => versionOf(catalog, caller, o)));
  return {
    prompts: offered.map((o, i) => ({
      name: o.name,
      title: o.prompt.name,
      ...(o.prompt.description ? { description: o.prompt.description } : {}),
      arguments: argumentsOf(versions[i]),
    })),
  };
}

async function versionOf(catalog: Client<typeof CatalogService>, caller: McpCaller, offered: OfferedPrompt) {
  if (offered.prompt.version?.id === offered.versionId) return offered.prompt.version;
  const r = await catalog.getPrompt({ id: offered.prompt.id, versionId: offered.versionId }, callOptions(caller));
  return r.prompt?.version;
}

/**
 * What the version's `{{> name@label}}` tags stand for now (api.md "Partials"), read with the
 * version when it includes any; an include that does not resolve is an error of the request.
 */
async function partialsOf(
  catalog: Client<typeof CatalogService>,
  caller: McpCaller,
  offered: OfferedPrompt,
  version: PromptVersion,
): Promise<PartialLookup | undefined> {
  if (version.includes.length === 0) return undefined;
  const r = await catalog.getPrompt(
    { id: offered.prompt.id, versionId: version.id, withPartials: true },
    callOptions(caller),
  );
  const unresolved = r.prompt?.unresolvedPartial;
  if (unresolved) throw new McpError(ErrorCode.InvalidRequest, unresolved.message);
  return partialLookupOf(new Map((r.prompt?.partials ?? []).map((p) => [includeKey(p), p.template])));
}

/** A variable's value from a prompt argument (always a string): JSON where the schema wants another type. */
function variableOf(text: string, property: { type?: unknown } | undefined): unknown {
  if (property?.type === undefined || property.type === "string") return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The version's messages rendered with the arguments (system and developer messages as user text, role in _meta). */
export async function getPrompt(
  catalog: Client<typeof CatalogService>,
  caller: McpCaller,
  name: string,
  args: Record<string, string>,
): Promise<GetPromptResult> {
  const offered = (await offeredPrompts(catalog, caller)).find((o) => o.name === name);
  if (!offered) throw new McpError(ErrorCode.InvalidParams, `no prompt named ${JSON.stringify(name)}`);
  const version = await versionOf(catalog, caller, offered);
  const content = version?.content;
  if (!version || !content)
    throw new McpError(ErrorCode.InvalidParams, `prompt ${JSON.stringify(name)} has no version`);
  const partials = await partialsOf(catalog, caller, offered, version);
  const schema = objectSchemaOf(content.variablesSchema?.json);
  const properties = (schema?.properties ?? {}) as Record<string, { type?: unknown }>;
  const missing = argumentsOf(version).filter((a) => a.required && args[a.name] === undefined);
  if (missing.length > 0) {
    throw new McpError(ErrorCode.InvalidParams, `missing arguments: ${missing.map((a) => a.name).join(", ")}`);
  }
  const variables = Object.fromEntries(Object.entries(args).map(([k, v]) => [k, variableOf(v, properties[k])]));
  // MCP messages are user or assistant: system and developer text goes as user text, its role in _meta.
  const message = (role: string, template: string) => ({
    role: role === "assistant" ? ("assistant" as const) : ("user" as const),
    content: {
      type: "text" as const,
      text: renderPromptTemplate(template, variables, partials),
      _meta: { "kiln/role": role },
    },
  });
  const template =
    content.messages.length > 0 ? content.messages : [{ role: "system", content: content.systemPrompt, name: "" }];
  const messages = template.filter((m) => m.role !== "placeholder").map((m) => message(m.role, m.content));
  // A placeholder is the client's conversation: MCP arguments are strings, so it is named, not filled.
  const placeholders = template.filter((m) => m.role === "placeholder").map((m) => m.name);
  return {
    ...(offered.prompt.description ? { description: offered.prompt.description } : {}),
    messages,
    _meta: {
      "kiln/prompt": { id: offered.prompt.id, versionId: offered.versionId, version: version.version },
      ...(placeholders.length > 0 && { "kiln/placeholders": placeholders }),
    },
  };
}
