import type { AgentRun, JudgeRun, Kiln, ModelRun, PromptRun, SkillRun } from "@kiln/sdk";
import { useEffect, useMemo, useState } from "react";

export type Run = PromptRun | SkillRun | AgentRun | JudgeRun | ModelRun;

/** What a run ran, by name: the prompt, skill or agent, its version and the label it ran through. */
export interface RunTarget {
  name: string;
  /** The console page of the prompt, skill or agent. */
  href: string;
  version: number | null;
  /** The label the run resolved its version through (the run's own record, not the labels now). */
  label: string | null;
}

interface Resource {
  name: string;
  versions: { id: string; version: number }[];
}

const FAMILY = { prompt: "prompts", skill: "skills", agent: "agents" } as const;

/** The prompt, skill or agent a run belongs to (judge runs belong to none) and its version. */
export function targetOf(run: Run): { family: "prompts" | "skills" | "agents"; id: string; versionId: string } | null {
  if (run.kind === "prompt") return { family: FAMILY.prompt, id: run.promptId, versionId: run.promptVersionId };
  if (run.kind === "skill") return { family: FAMILY.skill, id: run.skillId, versionId: run.skillVersionId };
  if (run.kind === "agent") return { family: FAMILY.agent, id: run.agentId, versionId: run.agentVersionId };
  return null;
}

/**
 * Names the runs lack (the run answer carries ids only): each prompt, skill and agent read once
 * with its labels through the SDK, and kept for the life of the page.
 */
export class RunNames {
  readonly #resources = new Map<string, Promise<{ resource: Resource }>>();

  constructor(private readonly kiln: Kiln) {}

  #read(family: "prompts" | "skills" | "agents", id: string) {
    let read = this.#resources.get(id);
    if (!read) {
      const client = this.kiln[family];
      read = client.get(id).then((resource) => ({ resource }));
      // A failed read is tried again by the next page.
      read.catch(() => this.#resources.delete(id));
      this.#resources.set(id, read);
    }
    return read;
  }

  /** Each version of a prompt, skill or agent named "<name> v<n>", by version id; none when it cannot be read. */
  async versionNames(family: "prompts" | "skills" | "agents", id: string): Promise<[string, string][]> {
    try {
      const { resource } = await this.#read(family, id);
      return resource.versions.map((v) => [v.id, `${resource.name} v${v.version}`]);
    } catch {
      return [];
    }
  }

  /** The run's target by name, or null for a judge run or a target that cannot be read. */
  async of(run: Run): Promise<RunTarget | null> {
    const t = targetOf(run);
    if (!t) return null;
    try {
      const { resource } = await this.#read(t.family, t.id);
      return {
        name: resource.name,
        href: `/${t.family}/${t.id}`,
        version: resource.versions.find((v) => v.id === t.versionId)?.version ?? null,
        label: ("label" in run && run.label) || null,
      };
    } catch {
      return null;
    }
  }
}

/** The targets of `runs` by run id, filled in as they are read. */
export function useRunTargets(kiln: Kiln, runs: Run[]): Map<string, RunTarget | null> {
  const names = useMemo(() => new RunNames(kiln), [kiln]);
  const [targets, setTargets] = useState(new Map<string, RunTarget | null>());
  useEffect(() => {
    let live = true;
    const missing = runs.filter((r) => !targets.has(r.id));
    if (missing.length === 0) return;
    Promise.all(missing.map(async (r) => [r.id, await names.of(r)] as const)).then((found) => {
      if (live) setTargets((m) => new Map([...m, ...found]));
    });
    return () => {
      live = false;
    };
  }, [names, runs, targets]);
  return targets;
}

/** "Greeter v2 · production" (the label the run ran through, if any), or "" when its target is unknown. */
export function describeTarget(target: RunTarget | null | undefined): string {
  if (!target) return "";
  const version = target.version === null ? "" : ` v${target.version}`;
  return `${target.name}${version}${target.label ? ` · ${target.label}` : ""}`;
}
