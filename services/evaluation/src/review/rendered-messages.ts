/**
 * The messages a run sent its model, rendered again for the reviewer (docs/review.md "Claiming"):
 * each prompt version's template messages (its system and developer prompts for a text version) filled with the run's (or the skill step's)
 * variables as execution fills them (kit/templates) and the run's own messages placed as a run places
 * them (@kiln/contracts prompt-messages: a conversation variable at its placeholder); an unsaved
 * version's template from the run's input.draft; a model run's messages as sent; a judge
 * run's system and user messages. An agent run's messages are on its steps' runs. The prompt
 * versions are read from the catalog as the evaluation service acting in the run's organization.
 */
import type { Client } from "@connectrpc/connect";
import { includeKey, partialLookupOf } from "@kiln/contracts/partials";
import { placeMessages, type TemplateMessage, type TextMessage, templateOf } from "@kiln/contracts/prompt-messages";
import type { PartialLookup } from "@kiln/contracts/prompt-template";
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

/** A template's messages with their text filled, and the run's messages placed as a run places them. */
function filled(
  template: readonly TemplateMessage[],
  variables: Json,
  partials: PartialLookup | undefined,
  chat: RenderedMessage[],
  step: string,
): RenderedMessage[] {
  const texts = template.map((m) =>
    m.role === "placeholder" ? m : { ...m, content: renderPromptTemplate(m.content, variables, partials) },
  );
  return placeMessages(texts, variables, chat).map((m) => ("step" in m ? m : { ...m, step }));
}

/** The template messages of a catalog version's content or of a run's draft (input.draft). */
function templateMessages(content: {
  systemPrompt?: unknown;
  developerPrompt?: unknown;
  messages?: unknown;
}): TemplateMessage[] {
  const list = Array.isArray(content.messages) ? content.messages.map(objectOf) : [];
  const messages = list.map(
    (m): TemplateMessage =>
      m.role === "placeholder"
        ? { role: "placeholder", name: asText(m.name) }
        : { role: asText(m.role) as TextMessage["role"], content: asText(m.content) },
  );
  return [
    ...templateOf({
      systemPrompt: asText(content.systemPrompt),
      developerPrompt: typeof content.developerPrompt === "string" ? content.developerPrompt : null,
      messages,
    }),
  ];
}

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
    // What its `{{> name}}` tags include now (api.md "Partials"): the run may have sent an older text.
    const partials = partialLookupOf(new Map((r.prompt?.partials ?? []).map((p) => [includeKey(p), p.template])));
    return filled(templateMessages(content), objectOf(variables), partials, chat, step);
  }

  return async function messagesOf(run: Run): Promise<RenderedMessage[]> {
    const input = objectOf(parsed(run.input));
    const org = run.organizationId;
    if (run.kind === "judge")
      return [
        { role: "system", content: asText(input.system), step: "" },
        { role: "user", content: asText(input.user), step: "" },
      ];
    const chat = Array.isArray(input.messages) ? input.messages.map(objectOf) : [];
    const own = chat.map((m) => ({ role: asText(m.role), content: asText(m.content), step: "" }));
    // A model run sent the caller's messages as they are.
    if (run.kind === "model") return own;
    if (run.kind === "prompt") {
      const variables = objectOf(input.variables);
      // A run of an unsaved version keeps its template in input.draft (api.md "Runs").
      if (run.promptVersionId === "" && input.draft !== undefined) {
        return filled(templateMessages(objectOf(input.draft)), variables, undefined, own, "");
      }
      return promptMessages(org, run.promptId, run.promptVersionId, variables, "", own);
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
