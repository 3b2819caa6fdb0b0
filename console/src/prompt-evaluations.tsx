/**
 * A prompt's evaluations (docs/api.md "Prompt evaluations"): run a dataset on some of its versions,
 * on their own models or side by side on several, judged by assertions; the runs before it.
 */
import type { Dataset, Prompt } from "@kiln/sdk";
import { useCallback, useState } from "react";
import { useAction, useLoaded } from "./action.js";
import { type AssertionDraft, AssertionsEditor, assertionsOf } from "./evaluation-assertions.js";
import { EvaluationHistory } from "./evaluation-history.js";
import { useRunnableModels } from "./org-models.js";
import type { PageProps } from "./router.js";
import { ActButton, CheckList, ErrorBox, Field, SelectField } from "./ui.js";

/** At most this many versions and models in one evaluation (the API's bound). */
const MAX_CHOSEN = 5;

export function PromptEvaluations({ kiln, session, navigate, prompt }: PageProps & { prompt: Prompt }) {
  const { error, setError, act } = useAction();
  const organizationId = session.organizationId;
  const readDatasets = useCallback(
    async () => (await kiln.datasets.list({ organizationId, limit: 200 })).data,
    [kiln, organizationId],
  );
  const datasets = useLoaded<Dataset[]>(readDatasets, setError).value;
  const { models, routes } = useRunnableModels(kiln, organizationId);
  const runnable = [...models.filter((m) => m.available).map((m) => m.id), ...routes];
  const [datasetId, setDatasetId] = useState("");
  const [versionIds, setVersionIds] = useState<string[]>([]);
  const [chosenModels, setChosenModels] = useState<string[]>([]);
  const [drafts, setDrafts] = useState<AssertionDraft[]>([{ type: "contains", fields: {} }]);
  const [repeats, setRepeats] = useState("1");
  const versions = [...prompt.versions].reverse();
  const versionLabel = (id: string) => {
    const v = prompt.versions.find((x) => x.id === id);
    return v ? `v${v.version}${v.id === prompt.publishedVersionId ? " (published)" : ""}` : id;
  };

  async function start() {
    const n = Number(repeats);
    const started = await kiln.promptEvaluations.run(prompt.id, {
      organizationId,
      datasetId,
      assertions: assertionsOf(drafts),
      ...(versionIds.length > 0 ? { versionIds } : {}),
      ...(chosenModels.length > 0 ? { models: chosenModels } : {}),
      ...(n > 1 ? { repeats: n } : {}),
    });
    navigate(`/prompts/${prompt.id}/evaluations/${started.evaluationRunId}`);
  }

  const chosenDataset = datasets?.find((d) => d.id === datasetId);
  return (
    <section aria-labelledby="prompt-evaluations" className="card evaluations">
      <h2 id="prompt-evaluations">Evaluations</h2>
      <ErrorBox error={error} shownFields={["datasetId", "assertions"]} />
      <SelectField id="evaluation-dataset" label="Dataset" value={datasetId} onChange={setDatasetId}>
        <option value="">{datasets?.length === 0 ? "No dataset yet: create one under Datasets" : "Choose…"}</option>
        {(datasets ?? []).map((d) => (
          <option key={d.id} value={d.id}>
            {d.name} · {d.itemCount} item{d.itemCount === 1 ? "" : "s"} · version {d.version}
          </option>
        ))}
      </SelectField>
      <fieldset>
        <legend>Versions (none chosen: the published one, else the latest)</legend>
        <CheckList
          values={versions.map((v) => v.id)}
          chosen={versionIds}
          onChange={(c) => setVersionIds(c.slice(0, MAX_CHOSEN))}
          label={versionLabel}
          className="check inline"
        />
      </fieldset>
      <fieldset>
        <legend>Models side by side (none chosen: each version's own)</legend>
        <CheckList
          values={runnable}
          chosen={chosenModels}
          onChange={(c) => setChosenModels(c.slice(0, MAX_CHOSEN))}
          label={(m) => m}
          className="check inline"
        />
      </fieldset>
      <AssertionsEditor drafts={drafts} onChange={setDrafts} />
      <Field label="Attempts per item (1–20)" type="number" value={repeats} onChange={setRepeats} />
      <ActButton act={act} run={start} disabled={!datasetId || drafts.length === 0}>
        Run evaluation
      </ActButton>
      <p className="hint">
        {chosenDataset
          ? `${chosenDataset.itemCount} items × ${Math.max(1, versionIds.length)} version${versionIds.length > 1 ? "s" : ""} × ${Math.max(1, chosenModels.length)} model${chosenModels.length > 1 ? "s" : ""} × ${Math.max(1, Number(repeats) || 1)} attempt${Number(repeats) > 1 ? "s" : ""}: each a stored run, never answered from the cache.`
          : "Every item's input fills the prompt's variables; its expected output is the judge's reference."}
      </p>
      <EvaluationHistory kiln={kiln} promptId={prompt.id} navigate={navigate} />
    </section>
  );
}
