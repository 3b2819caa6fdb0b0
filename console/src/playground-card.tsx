import type { PromptRun, SkillRun } from "@kiln/sdk";
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
      <pre className={r.status === "failed" ? "output failed" : "output"}>
        {r.output?.text ?? (r.error ? `${r.error.code}: ${r.error.message}` : "")}
      </pre>
      <Link to={`/runs/${r.id}`} navigate={navigate}>
        Open the stored run
      </Link>
    </article>
  );
}
