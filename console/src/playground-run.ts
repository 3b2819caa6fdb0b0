/**
 * One run of the playground: a prompt streams its answer as the model writes it
 * (`POST /api/prompts/:id/run/stream` through the SDK's `prompts.stream`); a skill runs whole (its
 * steps do not stream). A stopped or broken-off stream ends with the run as stored (failed, error
 * code `cancelled` when stopped, with the text so far), read back by its id: nothing is lost.
 */
import type { CreatePromptVersionRequest, Kiln, PromptRun, SkillRun } from "@kiln/sdk";
import { call } from "./api.js";
import type { Choice, Target } from "./playground-pick.js";

/** A run in progress as the page shows it: the text so far, and its id once the run has started. */
export interface LiveRun {
  what: string;
  text: string;
  runId: string;
  /** A skill: the answer comes whole at the end. */
  whole: boolean;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The stored run `id` (a cancelled run is stored just after its stream closed). */
async function storedRun(id: string): Promise<PromptRun> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await call<PromptRun>("GET", `/api/runs/${id}`);
    } catch (e) {
      if (attempt >= 30) throw e;
      await pause(100);
    }
  }
}

/**
 * Runs `choice` of `target` with `variables`, telling `onLive` what has arrived; answers the run
 * (null when it was stopped before it started: nothing was stored).
 */
export async function runStreaming(
  kiln: Kiln,
  organizationId: string,
  target: Target,
  choice: Choice,
  variables: Record<string, unknown>,
  signal: AbortSignal,
  onLive: (live: Omit<LiveRun, "what">) => void,
  /** Unsaved edits of a prompt's version to run instead of the choice's version (playground-edits.tsx). */
  draft?: CreatePromptVersionRequest,
): Promise<PromptRun | SkillRun | null> {
  const pick = choice.selection.startsWith("l:")
    ? { label: choice.selection.slice(2) }
    : { versionId: choice.selection.slice(2) };
  if (target.kind === "skill") {
    onLive({ text: "", runId: "", whole: true });
    return kiln.skills.run(target.id, { organizationId, input: variables, ...pick });
  }
  const body = {
    organizationId,
    variables,
    ...(draft ? { draft } : pick),
    ...(choice.model ? { model: choice.model } : {}),
  };
  let runId = "";
  let text = "";
  try {
    // Each try asks the model: an answer kept for a version's or label's default cache TTL (docs/cache.md) would repeat.
    const options = { signal, headers: { "Kiln-Cache": "no-store" } };
    for await (const event of kiln.prompts.stream(target.id, body, options)) {
      if (event.type === "start") runId = event.runId;
      else if (event.type === "text") text += event.delta;
      else if (event.type === "done") return event.run;
      else break; // broke off: the run is stored failed
      onLive({ text, runId, whole: false });
    }
  } catch (e) {
    if (!runId) {
      if (signal.aborted) return null;
      throw e;
    }
  }
  return storedRun(runId);
}
