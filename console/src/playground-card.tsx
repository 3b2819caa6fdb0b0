import type { PromptRun, SkillRun } from "@kiln/sdk";
import type { LiveRun } from "./playground-run.js";
import type { Navigate } from "./router.js";
import { exactCost, formatCost, formatLatency, formatTokens } from "./run-format.js";
import { Link, StatusBadge } from "./ui.js";

/** A run of the playground, with what it ran (name and version or label, model asked for). */
export interface PlaygroundRun {
  run: PromptRun | SkillRun;
  what: string;
}

/** One run: what ran, status, model, tokens, cost, latency, the output, and a link to the stored run. */
export function RunCard({ shown, navigate }: { shown: PlaygroundRun; navigate: Navigate }) {
  const r = shown.run;
  return (
    <article className={`card run-card${r.status === "failed" ? " failed" : ""}`} aria-label={`Run ${r.id}`}>
      <h3>{shown.what}</h3>
      <p>
        <StatusBadge status={r.status} /> · {r.model ?? "several models"} · {formatTokens(r.usage)} tokens ·{" "}
        <span title={exactCost(r.estimatedCostUsd)}>{formatCost(r.estimatedCostUsd)}</span> ·{" "}
        {formatLatency(r.latencyMs)} · {r.toolCallCount} tool call{r.toolCallCount === 1 ? "" : "s"}
      </p>
      {r.error?.code === "cancelled" && <p className="hint">Stopped: the text received until then is kept.</p>}
      <pre className={r.status === "failed" && r.error?.code !== "cancelled" ? "output failed" : "output"}>
        {r.output?.text ?? (r.error ? `${r.error.code}: ${r.error.message}` : "")}
      </pre>
      <Link to={`/runs/${r.id}`} navigate={navigate}>
        Open the stored run
      </Link>
    </article>
  );
}

/** A run in progress: the answer as it arrives (a skill's comes whole, at the end). */
export function LiveRunCard({ live }: { live: LiveRun }) {
  return (
    <article className="card run-card live" aria-label={live.runId ? `Run ${live.runId} in progress` : "Run starting"}>
      <h3>{live.what}</h3>
      <p>
        <StatusBadge status="running" /> ·{" "}
        {live.whole ? "running its steps…" : live.text ? "streaming…" : "waiting for the model…"}
      </p>
      <pre className="output" aria-live="polite" aria-busy="true">
        {live.text}
        <span className="caret" aria-hidden="true" />
      </pre>
    </article>
  );
}
