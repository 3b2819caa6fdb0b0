/**
 * One prompt evaluation's report: status (polled until it is done), totals per version × model,
 * and per dataset item its input, expected output and each target's verdict, output and runs.
 */
import type { Dataset, DatasetItem, Prompt, PromptEvaluation } from "@kiln/sdk";
import { useCallback, useState } from "react";
import { useAction, useLoaded } from "./action.js";
import { isDone } from "./evaluation-format.js";
import { FailingFilter, failingOn, RunStatus, Totals, usePolledRun } from "./evaluation-report.js";
import { EvaluationResultCard, textOf } from "./evaluation-result.js";
import type { PageProps } from "./router.js";
import { formatDate } from "./run-format.js";
import { ActButton, ErrorBox, Link, Pending } from "./ui.js";

export function PromptEvaluationReport({
  kiln,
  navigate,
  promptId,
  runId,
}: PageProps & { promptId: string; runId: string }) {
  const { error, setError, act } = useAction();
  const readRun = useCallback(() => kiln.promptEvaluations.get(promptId, runId), [kiln, promptId, runId]);
  const { run, setRun } = usePolledRun<PromptEvaluation>(readRun, setError);
  const readPrompt = useCallback(() => kiln.prompts.get(promptId), [kiln, promptId]);
  const prompt = useLoaded<Prompt>(readPrompt, setError).value;
  const datasetId = run?.datasetId;
  const version = run?.datasetVersion;
  const readItems = useCallback(
    async () =>
      datasetId
        ? (await kiln.datasets.items(datasetId, { version: version ? String(version) : undefined, limit: 200 })).data
        : ([] as DatasetItem[]),
    [kiln, datasetId, version],
  );
  const items = useLoaded<DatasetItem[]>(readItems, setError).value;
  const readDataset = useCallback(async () => (datasetId ? kiln.datasets.get(datasetId) : null), [kiln, datasetId]);
  const dataset = useLoaded<Dataset | null>(readDataset, setError).value;
  const [only, setOnly] = useState<"all" | "failing">("all");
  if (!run) return <Pending error={error} what="the prompt evaluation" />;
  const keys = run.targets.map((t) => t.key);
  const byId = new Map((items ?? []).map((i, n) => [i.id, { item: i, n: n + 1 }]));
  const failing = failingOn(keys);
  const shown = only === "all" ? run.results : run.results.filter(failing);
  const done = isDone(run.status);
  const titleOf = (itemId: string) => {
    const found = byId.get(itemId);
    return found ? `Item ${found.n}: ${textOf(found.item.input).slice(0, 80)}` : `Item …${itemId.slice(-6)}`;
  };
  return (
    <main className="eval-report">
      <p className="crumbs">
        <Link to={`/prompts/${promptId}`} navigate={navigate}>
          {prompt?.name ?? "Prompt"}
        </Link>{" "}
        › Evaluations
      </p>
      <h1>Prompt evaluation</h1>
      <ErrorBox error={error} />
      <RunStatus run={run} noun="item" />
      <dl className="summary">
        <dt>Started</dt>
        <dd>{formatDate(run.createdAt)}</dd>
        <dt>Dataset</dt>
        <dd>
          <Link to={`/datasets/${run.datasetId}`} navigate={navigate}>
            {dataset?.name ?? "the dataset"}
          </Link>{" "}
          at version {run.datasetVersion}
        </dd>
        <dt>Targets</dt>
        <dd>{keys.join(", ")}</dd>
        <dt>Assertions</dt>
        <dd>{run.assertions.map((a) => a.type.replace(/_/g, " ")).join(", ")}</dd>
        <dt>Attempts per item</dt>
        <dd>{run.repeats}</dd>
      </dl>
      {!done && (
        <ActButton
          act={act}
          className="secondary"
          run={async () => setRun(await kiln.promptEvaluations.cancel(promptId, runId))}
        >
          Cancel the evaluation
        </ActButton>
      )}
      {run.summary && (
        <section aria-labelledby="totals-heading">
          <h2 id="totals-heading">Totals</h2>
          <Totals summary={run.summary} />
        </section>
      )}
      <section aria-labelledby="items-heading">
        <h2 id="items-heading">Items</h2>
        <FailingFilter
          only={only}
          onChange={setOnly}
          total={run.results.length}
          failing={run.results.filter(failing).length}
          noun="item"
        />
        {shown.map((r) => (
          <EvaluationResultCard
            key={r.itemId}
            result={r}
            title={titleOf(r.itemId)}
            evaluationCase={byId.get(r.itemId)?.item ?? null}
            targets={keys}
            navigate={navigate}
          />
        ))}
      </section>
    </main>
  );
}
