import { PRODUCTION } from "@kiln/contracts/labels";
import { invalidArgument, notFound } from "@kiln/kit/errors";
import { newId } from "@kiln/kit/ids";
import type { Principal } from "@kiln/kit/principal";
import { SCOPES } from "./access.js";
import type { CatalogDeps } from "./catalog-deps.js";
import { Issues } from "./domain/issues.js";
import { checkModelId, checkPromptVersion, type PromptVersionInput } from "./domain/prompt-version.js";
import { checkDistinctToolKeys } from "./domain/tool-pins.js";
import { byVersionAscending, latestVersion, livePublishedVersion } from "./domain/versions.js";
import type { PromptDoc, PromptVersionDoc } from "./store/catalog-store.js";
import { resolveToolPins, type ToolSelector } from "./tools.js";
import { commitPublish, type PublishingFamily } from "./versioned/publish.js";
import { alreadyPublished, checkDescription, metadataChanges, versionedResource } from "./versioned/resource.js";
import { insertNextVersion, wholeVersion, wholeVersions } from "./versioned/version-store.js";

/** A prompt with its versions (oldest first) and the one version it describes. */
export interface PromptView {
  prompt: PromptDoc;
  versions: PromptVersionDoc[];
  publishedVersionId: string | null;
  latestVersion: number;
  /** The version asked for, else the live published one, else the latest; null when none exists. */
  version: PromptVersionDoc | null;
}

export function promptView(prompt: PromptDoc, versions: PromptVersionDoc[], versionId = ""): PromptView {
  const sorted = [...versions].sort(byVersionAscending);
  const published = livePublishedVersion(sorted);
  const latest = latestVersion(sorted);
  let version: PromptVersionDoc | null = published ?? latest ?? null;
  if (versionId !== "") {
    const named = sorted.find((v) => v._id === versionId);
    if (!named) throw notFound("prompt version");
    version = named;
  }
  return {
    prompt,
    versions: sorted,
    publishedVersionId: published?._id ?? null,
    latestVersion: latest?.version ?? 0,
    version,
  };
}

export type Prompts = ReturnType<typeof createPrompts>;

/** The prompt use cases (docs/concepts.md "Prompt", "Prompt version"; api.md "Prompts"). */
export function createPrompts(deps: CatalogDeps) {
  const c = deps.collections;

  const resource = versionedResource(deps, {
    noun: "prompt",
    parents: c.prompts,
    versions: c.promptVersions,
    parentField: "promptId",
    parentOf: (v) => v.promptId,
  });
  const promptFor = (
    principal: Principal,
    id: string,
    scope: typeof SCOPES.promptsRead | typeof SCOPES.promptsWrite,
  ): Promise<PromptDoc> => resource.parentFor(principal, id, scope);

  const versionsOf = resource.versionsOf;
  /** The view with the version it describes read whole (versionsOf reads summaries). */
  const whole = (view: PromptView) => wholeVersion(c.promptVersions, view, "version");
  const publishing: PublishingFamily<PromptVersionDoc> = {
    kind: "prompt",
    versions: c.promptVersions,
    versionsOf,
    touch: resource.touch,
    forgetLive: (id) => deps.live.forgetPrompt(id),
  };

  return {
    async createPrompt(
      principal: Principal,
      input: { organizationId: string; name: string; description: string; defaultModel?: string },
    ): Promise<PromptView> {
      await deps.access.inOrganization(principal, input.organizationId, SCOPES.promptsWrite);
      const issues = new Issues();
      const name = issues.text("name", input.name);
      const description = checkDescription(issues, input.description);
      if (input.defaultModel !== undefined) checkModelId(issues, "defaultModel", input.defaultModel);
      issues.throwIfAny();
      const at = deps.now();
      const prompt: PromptDoc = {
        _id: newId("prm"),
        organizationId: input.organizationId,
        name,
        description,
        defaultModel: input.defaultModel ?? null,
        createdAt: at,
        updatedAt: at,
      };
      await c.prompts.insertOne(prompt);
      return promptView(prompt, []);
    },

    async getPrompt(principal: Principal, input: { id: string; versionId: string }): Promise<PromptView> {
      const prompt = await promptFor(principal, input.id, SCOPES.promptsRead);
      return whole(promptView(prompt, await versionsOf(prompt._id), input.versionId));
    },

    async listPrompts(principal: Principal, input: { organizationId: string; limit: number; cursor: string }) {
      const page = await resource.page(principal, input, SCOPES.promptsRead);
      const views = page.items.map(({ parent, versions }) => promptView(parent, versions));
      return { items: await wholeVersions(c.promptVersions, views, "version"), nextCursor: page.nextCursor };
    },

    async updatePrompt(
      principal: Principal,
      input: { id: string; name?: string; description?: string; defaultModel?: string; clearDefaultModel: boolean },
    ): Promise<PromptView> {
      const prompt = await promptFor(principal, input.id, SCOPES.promptsWrite);
      const issues = new Issues();
      const set: Partial<PromptDoc> = metadataChanges(issues, input);
      if (input.defaultModel !== undefined && input.clearDefaultModel) {
        issues.add("defaultModel", "cannot be set and cleared at once");
      } else if (input.defaultModel !== undefined) {
        checkModelId(issues, "defaultModel", input.defaultModel);
        set.defaultModel = input.defaultModel;
      } else if (input.clearDefaultModel) set.defaultModel = null;
      issues.throwIfAny();
      const updated = await resource.applyChanges(prompt, set);
      deps.live.forgetPrompt(prompt._id);
      return whole(promptView(updated, await versionsOf(prompt._id)));
    },

    /** A new immutable draft version; `model` is fixed now (api.md: request, else the prompt's default). */
    async createPromptVersion(
      principal: Principal,
      input: PromptVersionInput & { promptId: string; tools: readonly ToolSelector[] },
    ): Promise<PromptVersionDoc> {
      const prompt = await promptFor(principal, input.promptId, SCOPES.promptsWrite);
      const issues = new Issues();
      const content = checkPromptVersion(issues, input);
      issues.throwIfAny();
      const tools = await resolveToolPins(deps, prompt.organizationId, "tools", input.tools);
      checkDistinctToolKeys(issues, "tools", tools);
      issues.throwIfAny();
      const at = deps.now();
      const id = newId("pv");
      const version = await insertNextVersion(c.promptVersions, { promptId: prompt._id }, (n) => ({
        _id: id,
        promptId: prompt._id,
        organizationId: prompt.organizationId,
        version: n,
        status: "draft" as const,
        ...content,
        model: input.model ?? prompt.defaultModel ?? null,
        tools,
        createdAt: at,
        publishedAt: null,
      }));
      await resource.touch(prompt._id, at);
      await deps.events.versionCreated(version);
      return version;
    },

    /** Moves one draft version to published, once; older published versions stay published. */
    async publishPromptVersion(
      principal: Principal,
      input: { promptId: string; versionId: string },
    ): Promise<PromptView> {
      const prompt = await promptFor(principal, input.promptId, SCOPES.promptsWrite);
      if (input.versionId === "")
        throw invalidArgument("versionId is required", [{ field: "versionId", issue: "is required" }]);
      // Publishing moves the production label (docs/labels.md).
      await deps.access.moveLabel(principal, prompt.organizationId, SCOPES.promptsWrite, "prompt", PRODUCTION);
      const version = await c.promptVersions.findOne({ _id: input.versionId, promptId: prompt._id });
      if (!version) throw notFound("prompt version");
      if (version.status === "published") throw alreadyPublished("prompt", version);
      const at = await commitPublish(deps, principal, publishing, prompt, version);
      return whole(promptView({ ...prompt, updatedAt: at }, await versionsOf(prompt._id)));
    },
  };
}
