/**
 * The messages a run sent its model, rendered again for the reviewer (docs/review.md "Claiming"):
 * each prompt version's system and developer templates filled with the run's (or the skill step's)
 * variables as execution fills them (kit/templates), then a prompt run's own chat messages; a judge
 * run's system and user messages. An agent run's messages are on its steps' runs. The prompt
 * versions are read from the catalog as the evaluation service acting in the run's organization.
 */
import type { Client } from "@connectrpc/connect";
import { renderPromptTemplate } from "@kiln/kit/templates";
import type { CatalogService } from "@kiln/proto/catalog";
import type { Run } from "@kiln/proto/execution";
import { inOrganization, remoteCall } from "../access.js";

export type PromptReader = Pick<Client<typeof CatalogService>, "getPrompt">;

export interface RenderedMessage {
  role: string;
  content: string;
  /** The skill step it was sent for; "" for a prompt or judge run. */
  step: string;
}

type Json = Record<string, unknown>;
const objectOf = (v: unknown): Json => (v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Json) : {});
const parsed = (text: { json: string } | undefined): unknown => (text ? JSON.parse(text.json) : undefined);
const asText = (v: unknown) => (v === undefined || v === null ? "" : typeof v === "string" ? v : JSON.stringify(v));

export function createMessageRenderer(catalog: PromptReader) {
  async function promptMessages(org: string, promptId: string, versionId: string, variables: unknown, step = "") {
    if (!promptId || !versionId) return [];
    const r = await remoteCall(catalog.getPrompt({ id: promptId, versionId }, inOrganization(org)));
    const content = r.prompt?.version?.content;
    if (!content) return [];
    const vars = objectOf(variables);
    const out: RenderedMessage[] = [
      { role: "system", content: renderPromptTemplate(content.systemPrompt, vars), step },
    ];
    if (content.developerPrompt)
      out.push({ role: "developer", content: renderPromptTemplate(content.developerPrompt, vars), step });
    return out;
  }

  return async function messagesOf(run: Run): Promise<RenderedMessage[]> {
    const input = objectOf(parsed(run.input));
    const org = run.organizationId;
    if (run.kind === "judge")
      return [
        { role: "system", content: asText(input.system), step: "" },
        { role: "user", content: asText(input.user), step: "" },
      ];
    if (run.kind === "prompt") {
      const chat = Array.isArray(input.messages) ? input.messages.map(objectOf) : [];
      return [
        ...(await promptMessages(org, run.promptId, run.promptVersionId, input.variables ?? {})),
        ...chat.map((m) => ({ role: asText(m.role), content: asText(m.content), step: "" })),
      ];
    }
    if (run.kind === "skill") {
      const steps = await Promise.all(
        run.steps.map((s) => promptMessages(org, s.promptId, s.promptVersionId, parsed(s.input), s.stepId)),
      );
      return steps.flat();
    }
    return [];
  };
}
