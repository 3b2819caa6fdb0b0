/**
 * Stage one of a model run, resolve: a run of a model without a prompt (`RunPrompt` with no
 * `prompt_id` and a `model`; docs/openai-compatible.md "Models"). The caller's messages are sent
 * to the model as they are, with its tools, response format and sampling settings: the template
 * is one placeholder the messages fill, so render, call, record, store and publish are a prompt
 * run's. It is stored as a run of kind "model" (`mrun_…`) with no prompt and no version.
 */
import { invalidArgument } from "@kiln/kit/errors";
import { cachePolicyOf, checkCacheDirective } from "../cache/cache-policy.js";
import { routedRegistry } from "../model-routes/routed-registry.js";
import type { CallContext } from "./call-context.js";
import { checkAgainstVersion, parseCallerOptions } from "./caller-options.js";
import type { PromptRunRequest, ResolveDeps, ResolvedPromptRun } from "./resolve-versions.js";
import { parseMessages, parseObject } from "./run-input.js";
import { checkImageInput, type RunnablePrompt, resolveModelFor } from "./runnable.js";

/** A request that names a model and no prompt: a model run. */
export const isModelRun = (req: Pick<PromptRunRequest, "promptId" | "model">): boolean =>
  req.promptId === "" && req.model !== "";

/** The run's version: no text of its own, the caller's messages in its one placeholder. */
function bareVersion(organizationId: string, model: string): RunnablePrompt {
  return {
    organizationId,
    promptId: "",
    promptVersionId: "",
    systemPrompt: "",
    developerPrompt: null,
    messages: [{ role: "placeholder", name: "messages" }],
    variablesSchema: { type: "object" },
    responseFormat: { type: "text" },
    temperature: null,
    maxOutputTokens: null,
    model,
    tools: [],
  };
}

const refuse = (field: string, issue: string, message: string) => invalidArgument(message, [{ field, issue }]);

/** A model run's model, messages and caller options; 400 for what only a prompt run takes. */
export async function resolveModelRun(
  deps: ResolveDeps,
  req: PromptRunRequest,
  ctx: CallContext,
): Promise<ResolvedPromptRun> {
  const scope = { organizationId: req.organizationId, requireAi: true, scope: "runs:write" } as const;
  await deps.identityAuth.authorize(ctx.principal, scope, ctx.requestId);
  // An unknown model is the first thing to say (the OpenAI API's 404 before any other check).
  const models = await routedRegistry(deps.models, deps.routes, req.organizationId, [req.model]);
  const model = await resolveModelFor(models, req.model, "model", req.organizationId);
  if (Object.keys(parseObject(req.variables, "variables")).length > 0) {
    throw refuse("variables", "is for prompts", "a model run has no template to fill: send messages, not variables");
  }
  if (req.versionId !== "" || (req.label ?? "") !== "") {
    const field = req.versionId !== "" ? "versionId" : "label";
    throw refuse(field, "needs a promptId", `${field} names a version of a prompt: a model run has none`);
  }
  if (req.evaluationRunId) throw refuse("evaluationRunId", "needs a promptId", "a model run is no evaluation's item");
  if (req.draft)
    throw refuse("draft", "needs a promptId", "a draft is an unsaved version of a prompt: name the prompt");
  checkCacheDirective(req.cache);
  const extraMessages = parseMessages(req.messages ?? []);
  if (extraMessages.length === 0) {
    throw refuse("messages", "is required", "a model run needs the messages to send the model");
  }
  const caller = parseCallerOptions(req);
  const version = bareVersion(req.organizationId, req.model);
  const prompt = { ...version, responseFormat: checkAgainstVersion(version, caller) };
  checkImageInput(model, extraMessages);
  const cache = cachePolicyOf(req.cache, {});
  return { prompt, model, variables: {}, extraMessages, caller, ...(cache && { cache }) };
}
