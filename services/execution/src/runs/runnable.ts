/**
 * Stage one of a run, resolve: what the catalog answered, as something to run (JSON parsed, tools
 * attached, the model checked to exist before anything runs).
 */
import { includeKey } from "@kiln/contracts/partials";
import type { TemplateMessage } from "@kiln/contracts/prompt-messages";
import { DomainError, invalidArgument } from "@kiln/kit/errors";
import type { ChatMessage, ResponseFormat } from "@kiln/models/provider";
import type { ProviderRegistry, ResolvedModel } from "@kiln/models/registry";
import type { ResolvedPrompt, ResolvedTool } from "@kiln/proto/catalog";
import type { JsonText } from "@kiln/proto/common";
import type { ExecutableTool } from "../tools/tool-executor.js";
import { firstImageOf, parseJson } from "./run-input.js";

const TEMPLATE_ROLES = new Set(["system", "developer", "user", "assistant"]);

/** The catalog's messages of a version (always set by it: built for a text version). */
function templateMessagesOf(list: readonly { role: string; content: string; name: string }[]): TemplateMessage[] {
  return list.flatMap((m): TemplateMessage[] => {
    if (m.role === "placeholder") return [{ role: "placeholder", name: m.name }];
    return TEMPLATE_ROLES.has(m.role) ? [{ role: m.role as "system", content: m.content }] : [];
  });
}

/** A prompt version ready to run: what the catalog resolved, with its JSON parsed. */
export interface RunnablePrompt {
  /** The version's organization: whose provider connections its model may name. */
  organizationId: string;
  promptId: string;
  promptVersionId: string;
  systemPrompt: string;
  developerPrompt: string | null;
  /** The version's template; absent or empty: its system and developer prompts. */
  messages?: TemplateMessage[];
  variablesSchema: unknown;
  responseFormat: ResponseFormat;
  temperature: number | null;
  maxOutputTokens: number | null;
  model: string | null;
  tools: (ExecutableTool & { description: string })[];
  /** The text each prompt it includes stands for now, by includeKey (api.md "Partials"); absent: none. */
  partials?: Map<string, string>;
  /** An include that does not resolve now: a run fails with `unresolved_partial` and this message. */
  unresolvedPartial?: { reference: string; message: string };
}

/** One step of a skill's composition, ready to run. */
export interface SkillStep {
  alias: string;
  variables: Record<string, unknown>;
  prompt: RunnablePrompt;
}

export function toolOf(t: ResolvedTool, organizationId: string): ExecutableTool & { description: string } {
  return {
    toolKey: t.toolKey,
    toolVersionId: t.toolVersionId,
    type: t.content?.type ?? "",
    config: parseJson(t.content?.config?.json, {}),
    inputSchema: parseJson(t.content?.inputSchema?.json, { type: "object" }),
    organizationId,
    description: t.description,
  };
}

function responseFormatOf(text: string | undefined): ResponseFormat {
  const rf = parseJson(text, { type: "text" }) as { type?: string; name?: string; schema?: Record<string, unknown> };
  return rf.type === "json_schema" && rf.schema
    ? { type: "json_schema", name: rf.name ?? "response", schema: rf.schema }
    : { type: "text" };
}

/** The catalog's resolved prompt version as something to run, with extra (skill-level) tools. */
export function runnableOf(resolved: ResolvedPrompt, extraTools: ResolvedTool[] = []): RunnablePrompt {
  const v = resolved.version;
  if (!v) throw new Error("catalog returned no prompt version");
  const c = v.content;
  const byKey = new Map<string, ResolvedTool>();
  for (const t of [...resolved.tools, ...extraTools]) byKey.set(t.toolKey, t);
  return {
    organizationId: v.organizationId,
    promptId: v.promptId,
    promptVersionId: v.id,
    systemPrompt: c?.systemPrompt ?? "",
    developerPrompt: c?.developerPrompt ?? null,
    messages: templateMessagesOf(c?.messages ?? []),
    variablesSchema: parseJson(c?.variablesSchema?.json, { type: "object" }),
    responseFormat: responseFormatOf(c?.responseFormat?.json),
    temperature: c?.temperature ?? null,
    maxOutputTokens: c?.maxOutputTokens ?? null,
    model: c?.model ?? null,
    tools: [...byKey.values()].map((t) => toolOf(t, v.organizationId)),
    ...(resolved.partials.length > 0 && {
      partials: new Map(resolved.partials.map((p) => [includeKey(p), p.template])),
    }),
    ...(resolved.unresolvedPartial && {
      unresolvedPartial: {
        reference: resolved.unresolvedPartial.reference,
        message: resolved.unresolvedPartial.message,
      },
    }),
  };
}

/** The names a prompt version declares as its variables. */
export const declaredVariables = (prompt: RunnablePrompt): string[] =>
  Object.keys((prompt.variablesSchema as { properties?: Record<string, unknown> }).properties ?? {});

/**
 * The request's model, else the version's, else the deployment's default, among the deployment's
 * and `organizationId`'s connection models; 400 naming `field` when unusable.
 */
export async function resolveModelFor(
  models: ProviderRegistry,
  requested: string | null | undefined,
  field: string,
  organizationId: string,
): Promise<ResolvedModel> {
  try {
    return await models.resolve(requested ?? undefined, { organizationId });
  } catch (e) {
    if (e instanceof DomainError && field !== "model") {
      throw new DomainError(
        e.kind,
        e.message,
        e.details.map((d) => ({ ...d, field })),
      );
    }
    throw e;
  }
}

/** A 400 when the caller's messages carry an image and the model takes text only. */
export function checkImageInput(model: ResolvedModel, messages: ChatMessage[]): void {
  const image = firstImageOf(messages);
  if (image && !model.entry.capabilities.input.includes("image")) {
    throw invalidArgument(`model ${model.id} does not take images`, [
      { field: image, issue: `is an image: model ${model.id} takes text only (its capabilities' input)` },
    ]);
  }
}

/**
 * A skill version's composition as steps to run, every step's model checked first; `field` names
 * where a missing model is reported (`steps.<alias>.model`, or the agent step's id).
 */
export async function skillStepsOf(
  models: ProviderRegistry,
  resolved: {
    steps: { prompt?: ResolvedPrompt; step?: { alias: string; variables?: JsonText } }[];
    tools: ResolvedTool[];
  },
  fieldOf: (alias: string) => string,
  incomplete: string,
): Promise<SkillStep[]> {
  const steps = resolved.steps.map((s) => {
    if (!s.prompt || !s.step) throw new Error(incomplete);
    const prompt = runnableOf(s.prompt, resolved.tools);
    return { alias: s.step.alias, variables: parseJson(s.step.variables?.json, {}) as Record<string, unknown>, prompt };
  });
  // In order, so the first step whose model is unusable is the one reported.
  for (const step of steps)
    await resolveModelFor(models, step.prompt.model, fieldOf(step.alias), step.prompt.organizationId);
  return steps;
}
