/**
 * What a workflow step can run: the organization's prompts, skills and tools by name, each with
 * the fields its input takes (a prompt's variables, a skill's or a tool's input schema) and its
 * published versions, read through the SDK's pagination.
 */
import type { Kiln } from "@kiln/sdk";
import { useEffect, useState } from "react";
import { type Property, propertiesOf } from "./playground-inputs.js";
import type { StepType } from "./workflow-model.js";

export interface Source {
  type: StepType;
  id: string;
  name: string;
  /** The fields the step's input takes, from the schema of the version a step would run. */
  fields: Property[];
  /** Published versions a step can pin (newest first); a tool's versions are not listed. */
  versions: { id: string; version: number }[];
  /** Whether a step can run it unpinned: a published prompt or skill, or any tool. */
  runnable: boolean;
}

const published = (versions: { id: string; version: number; status: string }[]) =>
  versions
    .filter((v) => v.status === "published")
    .map(({ id, version }) => ({ id, version }))
    .reverse();

/** A versioned prompt or skill as a source: runnable unpinned once it has a published version. */
const versioned = (
  type: StepType,
  r: { id: string; name: string; versions: Parameters<typeof published>[0]; publishedVersionId: string | null },
  schema: unknown,
): Source => ({
  type,
  id: r.id,
  name: r.name,
  fields: propertiesOf(schema),
  versions: published(r.versions),
  runnable: r.publishedVersionId !== null,
});

/** Every prompt, skill and tool of the organization, prompts first. */
export async function readSources(kiln: Kiln, organizationId: string | undefined): Promise<Source[]> {
  const query = { organizationId, limit: 200 };
  const sources: Source[] = [];
  for await (const p of kiln.prompts.list(query)) sources.push(versioned("prompt", p, p.version?.variablesSchema));
  for await (const s of kiln.skills.list(query)) sources.push(versioned("skill", s, s.inputSchema));
  for await (const t of kiln.tools.list(query)) {
    sources.push({
      type: "tool",
      id: t.id,
      name: t.name,
      fields: propertiesOf(t.inputSchema),
      versions: [],
      runnable: true,
    });
  }
  return sources;
}

/** The sources, read once per page; `null` until they are read. */
export function useSources(kiln: Kiln, organizationId: string | undefined): Source[] | null {
  const [sources, setSources] = useState<Source[] | null>(null);
  useEffect(() => {
    readSources(kiln, organizationId).then(setSources, () => setSources([]));
  }, [kiln, organizationId]);
  return sources;
}

/** The source a step runs, by its ref. */
export function sourceOf(
  sources: Source[],
  type: StepType,
  ref: Record<string, string | undefined>,
): Source | undefined {
  const key = type === "prompt" ? "promptId" : type === "skill" ? "skillId" : "toolId";
  return sources.find((s) => s.type === type && s.id === ref[key]);
}

export const TYPE_NAMES: Record<StepType, string> = { prompt: "Prompt", skill: "Skill", tool: "Tool" };
