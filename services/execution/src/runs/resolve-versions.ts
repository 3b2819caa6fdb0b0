/**
 * Stage one of prompt and skill runs, resolve: the caller authorized, its JSON parsed, the version
 * resolved by the catalog, and what is about to run checked (variables, input, every step's model)
 * before any model is called.
 */
import type { Client } from "@connectrpc/connect";
import type { IdentityAuth } from "@kiln/kit/authorizer";
import { failedPrecondition, invalidArgument } from "@kiln/kit/errors";
import type { JsonText } from "@kiln/kit/json-text";
import { remote } from "@kiln/kit/rpc/errors";
import type { ChatMessage } from "@kiln/models/provider";
import type { ProviderRegistry, ResolvedModel } from "@kiln/models/registry";
import type { CatalogService, PromptDraft, SkillVersion } from "@kiln/proto/catalog";
import { type CacheDirective, type CachePolicy, cachePolicyOf, checkCacheDirective } from "../cache/cache-policy.js";
import { type RouteResolver, routedRegistry } from "../model-routes/routed-registry.js";
import type { InputValidator } from "../tools/input-validator.js";
import { type CallContext, catalogCallOptions } from "./call-context.js";
import { type CallerFields, type CallerOptions, checkAgainstVersion, parseCallerOptions } from "./caller-options.js";
import { type CallerMessage, parseJson, parseMessages, parseObject, renamed } from "./run-input.js";
import {
  checkImageInput,
  type RunnablePrompt,
  resolveModelFor,
  runnableOf,
  type SkillStep,
  skillStepsOf,
} from "./runnable.js";

export interface ResolveDeps {
  catalog: Client<typeof CatalogService>;
  identityAuth: IdentityAuth;
  models: ProviderRegistry;
  /** Lets a run's model be one of its organization's routes, "route/<name>" (docs/providers.md "Routes"). */
  routes?: RouteResolver;
  validator: InputValidator;
}

export interface PromptRunRequest extends CallerFields {
  organizationId: string;
  promptId: string;
  variables?: JsonText;
  versionId: string;
  label?: string;
  model: string;
  messages?: readonly CallerMessage[];
  /** The Kiln-Cache header (docs/cache.md). */
  cache?: CacheDirective;
  /** The evaluation run the run is made for: only the evaluation service (a service principal) says so. */
  evaluationRunId?: string;
  /** An unsaved version of the prompt to run instead of a stored one (the playground's edits). */
  draft?: PromptDraft;
}

export interface SkillRunRequest {
  organizationId: string;
  skillId: string;
  input?: JsonText;
  versionId: string;
  label?: string;
  /** The evaluation run the run is made for: only the evaluation service (a service principal) says so. */
  evaluationRunId?: string;
}

/** The caller authorized to run in the organization, then the request's JSON object `field` parsed (403 before 400). */
async function authorizedObject(
  deps: ResolveDeps,
  req: { organizationId: string },
  json: JsonText | undefined,
  field: string,
  ctx: CallContext,
): Promise<Record<string, unknown>> {
  const scope = { organizationId: req.organizationId, requireAi: true, scope: "runs:write" } as const;
  await deps.identityAuth.authorize(ctx.principal, scope, ctx.requestId);
  return parseObject(json, field);
}

/** The version a run names, as the catalog's resolve calls take it: an id, a label, or the live one. */
const versionRefOf = (req: { organizationId: string; versionId: string; label?: string }) => ({
  organizationId: req.organizationId,
  versionId: req.versionId,
  label: req.label ?? "",
});

export interface ResolvedPromptRun {
  prompt: RunnablePrompt;
  model: ResolvedModel;
  variables: Record<string, unknown>;
  extraMessages: ChatMessage[];
  /** The caller's tools, tool choice and sampling (its response format is the prompt's now). */
  caller: CallerOptions;
  /** The TTL the run uses the response cache with: its header's, else its label's or version's default. */
  cache?: CachePolicy;
}

/** A prompt run's version, model, variables, messages and caller options; 400 when they do not fit the version. */
export async function resolvePromptRun(
  deps: ResolveDeps,
  req: PromptRunRequest,
  ctx: CallContext,
): Promise<ResolvedPromptRun> {
  const variables = await authorizedObject(deps, req, req.variables, "variables", ctx);
  checkCacheDirective(req.cache);
  const extraMessages = parseMessages(req.messages ?? []);
  const caller = parseCallerOptions(req);
  const { prompt: resolved } = await remote(
    deps.catalog.resolvePromptVersion(
      { ...versionRefOf(req), promptId: req.promptId, ...(req.draft && { draft: req.draft }) },
      catalogCallOptions(ctx),
    ),
  );
  if (!resolved) throw new Error("catalog returned no prompt");
  const version = runnableOf(resolved);
  const prompt = { ...version, responseFormat: checkAgainstVersion(version, caller) };
  const requested = req.model || prompt.model;
  const models = await routedRegistry(deps.models, deps.routes, req.organizationId, [requested]);
  const model = await resolveModelFor(models, requested, "model", req.organizationId);
  checkImageInput(model, extraMessages);
  const check = deps.validator.check(prompt.variablesSchema, variables);
  const issues = check.ok ? [] : renamed(check.issues, "variables");
  if (issues.length > 0) throw invalidArgument("the variables do not match the version's variables schema", issues);
  const cache = cachePolicyOf(req.cache, {
    label: resolved.labelCacheTtlSeconds,
    version: resolved.version?.content?.cacheTtlSeconds,
  });
  return { prompt, model, variables, extraMessages, caller, ...(cache && { cache }) };
}

export interface ResolvedSkillRun {
  version: SkillVersion;
  input: Record<string, unknown>;
  steps: SkillStep[];
  /** The models as the organization sees them (its routes the steps name included): the steps run with these. */
  models: ProviderRegistry;
}

/** A skill run's version (the draft first when `preferDraft`), input and steps; 400/409 before anything runs. */
export async function resolveSkillRun(
  deps: ResolveDeps,
  req: SkillRunRequest,
  ctx: CallContext,
  preferDraft: boolean,
): Promise<ResolvedSkillRun> {
  const input = await authorizedObject(deps, req, req.input, "input", ctx);
  const resolved = await remote(
    deps.catalog.resolveSkillVersion(
      { ...versionRefOf(req), skillId: req.skillId, preferDraft },
      catalogCallOptions(ctx),
    ),
  );
  const version = resolved.version;
  if (!version) throw new Error("catalog returned no skill version");
  // A state conflict (api.md "Conventions"), not a run: an empty draft has nothing to execute.
  if (resolved.steps.length === 0) {
    throw failedPrecondition(`skill version ${version.version} has no prompts to run`, [
      { field: "promptComposition", issue: "is empty" },
    ]);
  }
  const check = deps.validator.check(parseJson(version.content?.inputSchema?.json, { type: "object" }), input);
  if (!check.ok) throw invalidArgument("the input does not match the skill's input schema", check.issues);
  // Every step's model must exist before anything runs.
  const models = await routedRegistry(
    deps.models,
    deps.routes,
    req.organizationId,
    resolved.steps.map((s) => s.prompt?.version?.content?.model),
  );
  const steps = await skillStepsOf(
    models,
    resolved,
    (alias) => `steps.${alias}.model`,
    "catalog returned an incomplete step",
  );
  return { version, input, steps, models };
}
