/**
 * Resolves an unsaved version of a prompt (ResolvePromptVersionRequest.draft: the playground's
 * edits): checked as CreatePromptVersion checks a version, its tools pinned and its includes
 * resolved as a stored version's are, stored nowhere. The answered version has no id and number 0;
 * what the draft gets wrong is refused as creating the version would be (400, or 404 for a tool it
 * names that does not exist), naming its field under `draft.`.
 */
import { DomainError, type FieldIssue, notFound } from "@kiln/kit/errors";
import type { CatalogDeps } from "../catalog-deps.js";
import { Issues } from "../domain/issues.js";
import { checkPromptVersion, type PromptVersionInput } from "../domain/prompt-version.js";
import { checkDistinctToolKeys } from "../domain/tool-pins.js";
import { createPromptIncludes } from "../prompt-include-check.js";
import type { PromptVersionDoc } from "../store/catalog-store.js";
import { resolveToolPins, type ToolSelector } from "../tools.js";
import { resolvePartials } from "./include-lookup.js";
import type { Loading } from "./loading.js";
import type { ResolvedPromptView } from "./views.js";

export type PromptDraftInput = PromptVersionInput & { tools: ToolSelector[] };

/** A refusal of the draft's content, its fields named where the run request carries them (`draft.…`). */
async function inDraft<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (e) {
    if (!(e instanceof DomainError) || e.details.length === 0) throw e;
    throw new DomainError(
      e.kind,
      `the draft: ${e.message}`,
      e.details.map((d) => ({ ...d, field: `draft.${d.field}` })),
    );
  }
}

export function createDraftLoader(deps: CatalogDeps, l: Loading) {
  const includes = createPromptIncludes(deps);

  /** The draft as the version it would be, checked (400) before anything is read for it. */
  async function versionOf(
    prompt: { _id: string; name: string; organizationId: string; defaultModel: string | null },
    draft: PromptDraftInput,
  ): Promise<PromptVersionDoc> {
    const issues = new Issues();
    const content = checkPromptVersion(issues, draft);
    issues.throwIfAny();
    const tools = await resolveToolPins(deps, prompt.organizationId, "tools", draft.tools);
    checkDistinctToolKeys(issues, "tools", tools);
    issues.throwIfAny();
    const version: PromptVersionDoc = {
      _id: "",
      organizationId: prompt.organizationId,
      version: 0,
      createdAt: new Date(),
      promptId: prompt._id,
      status: "draft",
      publishedAt: null,
      ...content,
      model: draft.model ?? prompt.defaultModel ?? null,
      tools,
    };
    await includes.check(prompt, version, "create");
    return version;
  }

  return async function loadDraft(input: {
    organizationId: string;
    promptId: string;
    draft: PromptDraftInput;
  }): Promise<ResolvedPromptView> {
    const prompt = await deps.collections.prompts.findOne({ _id: input.promptId });
    if (!prompt || prompt.organizationId !== input.organizationId) throw notFound("prompt");
    const version = await inDraft(versionOf(prompt, input.draft));
    const problems: FieldIssue[] = [];
    const tools = l.toolsOf(version.tools, await l.loadTools(version.tools), prompt.organizationId, "tools", problems);
    if (problems.length > 0) throw l.unresolvable("the draft", problems);
    const partials = await resolvePartials(deps, l, { promptId: prompt._id, name: prompt.name }, version);
    return { version, promptName: prompt.name, tools, ...partials };
  };
}
