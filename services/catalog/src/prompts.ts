import { notFound } from "@kiln/kit/errors";
import type { Principal } from "@kiln/kit/principal";
import type { CatalogDeps } from "./catalog-deps.js";
import { Issues } from "./domain/issues.js";
import type { JsonObject } from "./domain/json-schema.js";
import { messagesOfVersion } from "./domain/prompt-messages.js";
import { checkModelId, checkPromptVersion, type PromptVersionInput } from "./domain/prompt-version.js";
import { checkDistinctToolKeys } from "./domain/tool-pins.js";
import { byVersionAscending, latestVersion, livePublishedVersion } from "./domain/versions.js";
import { checkFolderSegments, createPromptFolders, folderFilter, folderPathOf } from "./prompt-folders.js";
import { createPromptIncludes } from "./prompt-include-check.js";
import type { ResolvedPartialView } from "./resolving/views.js";
import type { PromptDoc, PromptVersionDoc } from "./store/catalog-store.js";
import { resolveToolPins, type ToolSelector } from "./tools.js";
import { publishedCases } from "./versioned/cases.js";
import type { VersionDiffView } from "./versioned/diff.js";
import { familyStores } from "./versioned/families.js";
import { checkChangeMessage } from "./versioned/resource.js";

/**
 * The document a prompt version diff compares (api.md "Version diffs"): its messages (built from
 * the system and developer prompts for a version made from them, so rewriting a text version as
 * messages shows only what a run would send differently) and its settings.
 */
export function promptVersionDocument(v: PromptVersionDoc): JsonObject {
  return {
    messages: messagesOfVersion(v).map((m) => ({ ...m })),
    variablesSchema: JSON.parse(v.variablesSchema),
    responseFormat: JSON.parse(v.responseFormat),
    temperature: v.temperature,
    maxOutputTokens: v.maxOutputTokens,
    cacheTtlSeconds: v.cacheTtlSeconds ?? null,
    model: v.model,
    tools: v.tools.map((t) => ({ toolId: t.toolId, toolVersionId: t.toolVersionId })),
  };
}

/** A prompt with its versions (oldest first) and the one version it describes. */
export interface PromptView {
  prompt: PromptDoc;
  versions: PromptVersionDoc[];
  publishedVersionId: string | null;
  latestVersion: number;
  /** The version asked for, else the live published one, else the latest; null when none exists. */
  version: PromptVersionDoc | null;
  /** What `version` includes now, when the read asked for it (api.md "Partials"). */
  partials?: ResolvedPartialView[];
  unresolvedPartial?: { reference: string; message: string };
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
  const family = familyStores(deps).prompt;
  const cases = publishedCases(deps, family, { view: promptView, described: "version" });
  const resource = cases.resource;
  const includes = createPromptIncludes(deps);

  return {
    async createPrompt(
      principal: Principal,
      input: { organizationId: string; name: string; description: string; defaultModel?: string },
    ): Promise<PromptView> {
      const base = await resource.newParent(principal, input, (issues) => {
        checkFolderSegments(issues, "name", input.name.trim());
        if (input.defaultModel !== undefined) checkModelId(issues, "defaultModel", input.defaultModel);
      });
      const prompt: PromptDoc = { ...base, defaultModel: input.defaultModel ?? null };
      await family.parents.insertOne(prompt);
      return promptView(prompt, []);
    },

    /** A prompt describing `versionId` (default: the live one); `withPartials`: with what it includes now. */
    async getPrompt(principal: Principal, input: { id: string; versionId: string; withPartials?: boolean }) {
      const view = await cases.get(principal, input);
      if (!input.withPartials || !view.version) return view;
      return { ...view, ...(await includes.partialsOf(view.prompt, view.version)) };
    },

    /** A page of prompts; with `folder`, those in it (api.md "Folders"), with `nested` those below it too. */
    listPrompts(
      principal: Principal,
      input: {
        organizationId: string;
        limit: number;
        cursor: string;
        name?: string;
        folder?: string;
        nested?: boolean;
      },
    ) {
      const { folder, nested, ...rest } = input;
      if (folder === undefined) return cases.list(principal, rest);
      return cases.list(principal, { ...rest, where: folderFilter(folderPathOf(folder), nested ?? false) });
    },

    ...createPromptFolders(deps),

    async updatePrompt(
      principal: Principal,
      input: { id: string; name?: string; description?: string; defaultModel?: string; clearDefaultModel: boolean },
    ): Promise<PromptView> {
      return cases.update(principal, input, (issues) => {
        if (input.name !== undefined) checkFolderSegments(issues, "name", input.name.trim());
        if (input.defaultModel !== undefined && input.clearDefaultModel) {
          issues.add("defaultModel", "cannot be set and cleared at once");
        } else if (input.defaultModel !== undefined) {
          checkModelId(issues, "defaultModel", input.defaultModel);
          return { defaultModel: input.defaultModel };
        } else if (input.clearDefaultModel) return { defaultModel: null };
        return {};
      });
    },

    /** A new immutable draft version; `model` is fixed now (api.md: request, else the prompt's default). */
    async createPromptVersion(
      principal: Principal,
      input: PromptVersionInput & { promptId: string; tools: readonly ToolSelector[]; message?: string },
    ): Promise<PromptVersionDoc> {
      const prompt = await resource.parentFor(principal, input.promptId, family.write);
      const issues = new Issues();
      const content = checkPromptVersion(issues, input);
      const message = checkChangeMessage(issues, input.message ?? "");
      issues.throwIfAny();
      const tools = await resolveToolPins(deps, prompt.organizationId, "tools", input.tools);
      checkDistinctToolKeys(issues, "tools", tools);
      issues.throwIfAny();
      await includes.check(prompt, { ...content, organizationId: prompt.organizationId }, "create");
      const version = await resource.insertVersion(
        principal,
        prompt,
        (head) => ({
          ...head,
          promptId: prompt._id,
          status: "draft" as const,
          ...content,
          model: input.model ?? prompt.defaultModel ?? null,
          tools,
          publishedAt: null,
        }),
        { message },
      );
      await deps.events.versionCreated(version);
      return version;
    },

    async diffPromptVersions(
      principal: Principal,
      input: { promptId: string; versionId: string; againstVersionId: string },
    ): Promise<VersionDiffView> {
      return resource.diff(principal, { parentId: input.promptId, ...input }, promptVersionDocument);
    },

    /** Moves one draft version to published, once; older published versions stay published. */
    async publishPromptVersion(
      principal: Principal,
      input: { promptId: string; versionId: string },
    ): Promise<PromptView> {
      const { parent, version } = await cases.toPublish(principal, input.promptId, input.versionId);
      // What it includes may have changed since it was created (api.md "Partials").
      await includes.check(parent, version, "move");
      return cases.publish(principal, parent, version);
    },
  };
}
