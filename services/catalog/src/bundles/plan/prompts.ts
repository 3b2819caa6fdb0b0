import type { Bundle } from "@kiln/contracts/bundle";
import { fieldPath } from "../../domain/issues.js";
import { checkPromptVersion } from "../../domain/prompt-version.js";
import type { PromptDoc, PromptVersionDoc } from "../../store/catalog-store.js";
import { toDate } from "../shared.js";
import type { PlanContext } from "./context.js";
import { versionedPlanner } from "./versioned.js";

/** Plans the bundle's prompts; their versions are kept for the skills that compose them. */
export async function planPrompts(ctx: PlanContext, bundle: Bundle): Promise<void> {
  const { organizationId, promptVersions, promptNames, sub, mapNew, insert, pinsOf } = ctx;
  await versionedPlanner(ctx).planEach<PromptDoc, PromptVersionDoc, Bundle["prompts"][number]>(
    "prompt",
    bundle.prompts,
    {
      onOpen(pr, { here, m, id: promptId }) {
        promptNames.set(promptId, here?.name ?? pr.name.trim());
        for (const v of m.keep.values()) promptVersions.set(v._id, v);
      },
      async planVersion(_prompt, v, vField, promptId) {
        let content: ReturnType<typeof checkPromptVersion> | undefined;
        sub(vField, (s) => {
          content = checkPromptVersion(s, {
            systemPrompt: v.systemPrompt,
            ...(v.messages && { messages: v.messages }),
            ...(v.developerPrompt !== null && { developerPrompt: v.developerPrompt }),
            variablesSchemaJson: JSON.stringify(v.variablesSchema),
            responseFormatJson: JSON.stringify(v.responseFormat),
            ...(v.temperature !== null && { temperature: v.temperature }),
            ...(v.maxOutputTokens !== null && { maxOutputTokens: v.maxOutputTokens }),
            ...(typeof v.cacheTtlSeconds === "number" && { cacheTtlSeconds: v.cacheTtlSeconds }),
            ...(v.model !== null && { model: v.model }),
          });
        });
        const doc: PromptVersionDoc = {
          _id: mapNew(v.id, "pv"),
          promptId,
          organizationId,
          version: v.version,
          status: v.status,
          ...(content ?? {
            systemPrompt: v.systemPrompt,
            developerPrompt: v.developerPrompt,
            variablesSchema: "{}",
            responseFormat: '{"type":"text"}',
            temperature: v.temperature,
            maxOutputTokens: v.maxOutputTokens,
          }),
          model: v.model,
          tools: await pinsOf(v.tools, fieldPath(vField, "tools")),
          createdAt: new Date(v.createdAt),
          publishedAt: toDate(v.publishedAt),
        };
        promptVersions.set(doc._id, doc);
        insert("promptVersions", doc);
        return doc._id;
      },
      extra: (pr) => ({ defaultModel: pr.defaultModel }),
    },
  );
}
