/**
 * The messages a run sent its model, rendered again for the reviewer (docs/review.md "Claiming"):
 * each prompt version's template messages (its system and developer prompts for a text version) filled with the run's (or the skill step's)
 * variables as execution fills them (kit/templates), a prompt run's own chat messages at the placeholder; a judge
 * run's system and user messages. An agent run's messages are on its steps' runs. The prompt
 * versions are read from the catalog as the evaluation service acting in the run's organization.
 */
import type { Client } from "@connectrpc/connect";
import { includeKey, partialLookupOf } from "@kiln/contracts/partials";
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
  /** The version's template messages rendered; the run's own messages at its first placeholder, else after. */
  async function promptMessages(
    org: string,
    promptId: string,
    versionId: string,
    variables: unknown,
    step = "",
    chat: RenderedMessage[] = [],
  ) {
    if (!promptId || !versionId) return chat;
    const r = await remoteCall(catalog.getPrompt({ id: promptId, versionId, withPartials: true }, inOrganization(org)));
    const content = r.prompt?.version?.content;
    if (!content) return chat;
    const vars = objectOf(variables);
    // What its `{{> name}}` tags include now (api.md "Partials"): the run may have sent an older text.
    const partials = partialLookupOf(new Map((r.prompt?.partials ?? []).map((p) => [includeKey(p), p.template])));
    const template =
      content.messages.length > 0 ? content.messages : [{ role: "system", content: content.systemPrompt }];
    const out: RenderedMessage[] = [];
    let placed = false;
    for (const m of template) {
      if (m.role !== "placeholder")
        out.push({ role: m.role, content: renderPromptTemplate(m.content, vars, partials), step });
      else if (!placed) {
        out.push(...chat);
        placed = true;
      }
    }
    return placed ? out : [...out, ...chat];
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
      const own = chat.map((m) => ({ role: asText(m.role), content: asText(m.content), step: "" }));
      return promptMessages(org, run.promptId, run.promptVersionId, input.variables ?? {}, "", own);
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
