/**
 * A skill to evaluate draft against published: its published version runs one prompt and its
 * draft another, both taking `{name}` and calling `model`.
 */
import type { TestClient } from "@kiln/testing/test-client";

export interface TwoVersionSkill {
  skillId: string;
  publishedVersionId: string;
  draftVersionId: string;
}

export async function twoVersionSkill(
  api: TestClient,
  flow: { token: string; organizationId: string },
  options: { name: string; model: string; published: string; draft: string },
): Promise<TwoVersionSkill> {
  const { token, organizationId } = flow;
  const variablesSchema = { type: "object", properties: { name: { type: "string" } }, required: ["name"] };
  const prompt = (systemPrompt: string) =>
    api.createPublishedPrompt(token, organizationId, { systemPrompt, variablesSchema, model: options.model });
  const published = await prompt(options.published);
  const draft = await prompt(options.draft);
  const skill = await api.createSkill(token, organizationId, { name: options.name });
  await api.replaceSkillPrompts(token, skill.draftVersionId ?? "", [{ promptId: published.prompt.id }]);
  const live = await api.publishSkill(token, skill.id);
  const next = await api.post<{ id: string }>(`/api/skills/${skill.id}/versions`, {}, { token });
  if (next.status !== 201) throw new Error(`a new skill version: ${next.status} ${next.text}`);
  await api.replaceSkillPrompts(token, next.body.id, [{ promptId: draft.prompt.id }]);
  return { skillId: skill.id, publishedVersionId: live.publishedVersionId ?? "", draftVersionId: next.body.id };
}
