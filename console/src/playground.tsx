import type { Kiln } from "@kiln/sdk";
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { useAction, useLoaded } from "./action.js";
import { errorOf, type Session } from "./api.js";
import { useRunnableModels } from "./org-models.js";
import { LiveRunCard, type PlaygroundRun, RunCard } from "./playground-card.js";
import { draftBodyOf, EditHere, schemaOf, usePlaygroundEdits } from "./playground-edits.js";
import { propertiesOf, VariableFields, variablesOf } from "./playground-inputs.js";
import { openingOf } from "./playground-link.js";
import {
  type Choice,
  ChoiceFields,
  defaultSelection,
  describeSelection,
  readTargets,
  type Target,
  useLabels,
  versionIdOf,
} from "./playground-pick.js";
import { type LiveRun, runStreaming } from "./playground-run.js";
import type { Navigate } from "./router.js";
import { useSessionState } from "./session-state.js";
import { Empty, ErrorBox, Link, Pending, SelectField } from "./ui.js";

const GROUPS = [
  { kind: "prompt", label: "Prompts" },
  { kind: "skill", label: "Skills" },
] as const;

/** One run, or a pair side by side: what the page lists, newest first. */
type Shown = PlaygroundRun[];

/**
 * Pick a prompt or skill by name, a version or label and a model, fill its variables as a form and
 * run it; or run two versions or models on the same input side by side. Each run links to its page.
 */
export function Playground({ kiln, session, navigate }: { kiln: Kiln; session: Session; navigate: Navigate }) {
  // What was picked, typed and run survives a visit to another page (this tab, this organization).
  const kept = `kiln.playground.${session.organizationId ?? ""}`;
  const [key, setKey] = useSessionState(`${kept}.target`, "");
  const [a, setA] = useSessionState<Choice>(`${kept}.a`, { selection: "", model: "" });
  const [b, setB] = useSessionState<Choice>(`${kept}.b`, { selection: "", model: "" });
  const [comparing, setComparing] = useSessionState(`${kept}.comparing`, false);
  const [schema, setSchema] = useState<unknown>(null);
  const [values, setValues] = useSessionState<Record<string, string>>(`${kept}.values`, {});
  const [shown, setShown] = useSessionState<Shown[]>(`${kept}.runs`, []);
  const [live, setLive] = useState<LiveRun[] | null>(null);
  const editing = usePlaygroundEdits(kept);
  const { edits, setEdits } = editing;
  const stop = useRef<AbortController | null>(null);
  // Leaving the page stops what it streams (each run is then stored cancelled, with the text so far).
  useEffect(() => () => stop.current?.abort(), []);
  const { models, routes } = useRunnableModels(kiln, session.organizationId);
  const { error, setError, submit, act, busy: running } = useAction();
  const organizationId = session.organizationId;
  // Opened on something (a run, a version: playground-link.ts): it replaces what was kept, once.
  useEffect(() => {
    const opening = openingOf(location.search);
    if (!opening) return;
    // Only variables (a dataset item's input): they fill whatever is picked.
    if (opening.key) {
      setKey(opening.key);
      setA({ selection: opening.selection, model: "" });
      setComparing(false);
    }
    setValues(opening.values);
    setEdits(null);
    history.replaceState(null, "", location.pathname);
  }, [setKey, setA, setComparing, setValues, setEdits]);
  const keyNow = useRef(key);
  keyNow.current = key;
  const read = useCallback(async () => {
    const all = await readTargets(kiln, organizationId);
    const first = all.find((t) => t.publishedVersionId) ?? all[0];
    // What an earlier visit picked, while it is still there; else the first runnable one afresh.
    if (!all.some((t) => t.key === keyNow.current)) {
      setKey(first?.key ?? "");
      setA({ selection: defaultSelection(first), model: "" });
      setB({ selection: defaultSelection(first), model: "" });
    } else {
      setA((c) => (c.selection ? c : { ...c, selection: defaultSelection(first) }));
      setB((c) => (c.selection ? c : { ...c, selection: defaultSelection(first) }));
    }
    return all;
  }, [kiln, organizationId, setKey, setA, setB]);
  const targets = useLoaded(read, setError).value;
  const target = targets?.find((t) => t.key === key);
  const labels = useLabels(kiln, target);
  const versionA = versionIdOf(a.selection, labels);
  useEffect(() => {
    if (!target || !versionA) return;
    const schemaOf =
      target.kind === "prompt"
        ? kiln.prompts.get(target.id, { versionId: versionA }).then((p) => p.version?.variablesSchema)
        : kiln.skills.get(target.id, { versionId: versionA }).then((s) => s.inputSchema);
    schemaOf.then(setSchema).catch((e) => setError(errorOf(e)));
  }, [kiln, target, versionA, setError]);
  // Editing: the variables the edited schema declares (its last good one while it is being typed).
  const editedSchema = target?.kind === "prompt" ? schemaOf(edits) : undefined;
  const properties = useMemo(() => propertiesOf(editedSchema ?? schema), [editedSchema, schema]);
  const whatOf = (t: Target, choice: Choice, edited = false) =>
    `${t.name} · ${edited && edits ? `unsaved edits of v${edits.baseVersion}` : describeSelection(t, choice.selection, labels)}${choice.model ? ` · ${choice.model}` : ""}`;
  // Each side streams into its own live card; Stop aborts them all (each run is then stored cancelled).
  const run = submit(async () => {
    if (!target) return;
    const variables = variablesOf(properties, values);
    // Side A runs the edits when there are some; side B its own version, to compare with.
    const tried = target.kind === "prompt" && edits ? draftBodyOf(edits) : {};
    if (tried.issue) throw new Error(tried.issue);
    const sides = comparing ? [a, b] : [a];
    const abort = new AbortController();
    stop.current = abort;
    setLive(
      sides.map((c, i) => ({ what: whatOf(target, c, i === 0), text: "", runId: "", whole: target.kind === "skill" })),
    );
    try {
      const runs = await Promise.all(
        sides.map((c, i) =>
          runStreaming(
            kiln,
            organizationId ?? "",
            target,
            c,
            variables,
            abort.signal,
            (l) => setLive((all) => all?.map((x, j) => (j === i ? { ...x, ...l } : x)) ?? null),
            i === 0 ? tried.body : undefined,
          ),
        ),
      );
      const results: PlaygroundRun[] = runs.flatMap((r, i) =>
        r ? [{ run: r, what: whatOf(target, sides[i] as Choice, i === 0) }] : [],
      );
      if (results.length > 0) setShown((s) => [results, ...s].slice(0, 20));
    } finally {
      setLive(null);
      stop.current = null;
    }
  });
  const pick = (nextKey: string) => {
    const next = targets?.find((t) => t.key === nextKey);
    setKey(nextKey);
    setA({ selection: defaultSelection(next), model: "" });
    setB({ selection: defaultSelection(next), model: "" });
    setValues({});
    setEdits(null);
    setError(null);
  };
  if (targets === null) return <Pending error={error} what="prompts and skills" />;
  // The variables' issues are shown at their fields; the box tells the rest.
  const named = new Set(properties.flatMap((p) => [`variables.${p.name}`, `input.${p.name}`]));
  const boxed = error && {
    message: error.message,
    fields: Object.fromEntries(Object.entries(error.fields).filter(([f]) => !named.has(f))),
  };
  return (
    <main>
      <h1>Playground</h1>
      {targets.length === 0 || !target ? (
        <Empty>
          Nothing to run yet: the playground runs the prompts and skills that have a version.{" "}
          <Link to="/prompts" navigate={navigate}>
            Create a prompt
          </Link>
        </Empty>
      ) : (
        <div className="playground">
          <section className="card" aria-labelledby="run-form">
            <h2 id="run-form">Run a prompt or a skill</h2>
            <form
              onSubmit={run}
              noValidate
              onKeyDown={(e) => {
                // Ctrl+Enter (⌘+Enter on a Mac) runs from any field, a multi-line one included.
                if (e.key === "Enter" && (e.ctrlKey || e.metaKey) && !running) {
                  e.preventDefault();
                  e.currentTarget.requestSubmit();
                }
              }}
            >
              <SelectField id="target-select" label="Prompt or skill" value={key} onChange={pick}>
                {GROUPS.map((group) => (
                  <optgroup key={group.kind} label={group.label}>
                    {targets
                      .filter((t) => t.kind === group.kind)
                      .map((t) => (
                        <option key={t.key} value={t.key}>
                          {t.name}
                        </option>
                      ))}
                  </optgroup>
                ))}
              </SelectField>
              <ChoiceFields
                side=""
                target={target}
                labels={labels}
                models={models}
                routes={routes}
                choice={a}
                onChange={setA}
              />
              {target.kind === "prompt" && (
                <EditHere
                  editing={editing}
                  error={error}
                  onOpen={() => act(() => editing.open(kiln, target.id, versionA))}
                  onSave={() => act(() => editing.save(kiln, target.id))}
                  canOpen={versionA !== ""}
                />
              )}
              <label className="check">
                <input type="checkbox" checked={comparing} onChange={(e) => setComparing(e.target.checked)} /> Compare
                side by side with another version or model
              </label>
              {comparing && (
                <fieldset className="compare-with">
                  <legend>Compared with</legend>
                  <ChoiceFields
                    side="B"
                    target={target}
                    labels={labels}
                    models={models}
                    routes={routes}
                    choice={b}
                    onChange={setB}
                  />
                </fieldset>
              )}
              <h3 className="form-part">Variables</h3>
              <VariableFields properties={properties} values={values} setValues={setValues} error={error} />
              <ErrorBox error={boxed} />
              <div className="actions">
                <button type="submit" disabled={running}>
                  {running ? "Running…" : comparing ? "Run both" : "Run"}
                </button>
                {running && target.kind === "prompt" && (
                  <button type="button" className="secondary" onClick={() => stop.current?.abort()}>
                    Stop
                  </button>
                )}
              </div>
              <p className="hint">Ctrl+Enter (⌘+Enter) runs from any field.</p>
              {target.kind === "skill" && (
                <p className="hint">A skill's answer shows once all its steps have run: skills do not stream.</p>
              )}
            </form>
          </section>
          <section aria-labelledby="runs">
            <h2 id="runs">Runs of this session</h2>
            {live && (
              <div className={live.length > 1 ? "side-by-side" : undefined}>
                {live.map((l, i) => (
                  // biome-ignore lint/suspicious/noArrayIndexKey: the sides of one run, in order
                  <LiveRunCard key={i} live={l} />
                ))}
              </div>
            )}
            {shown.length === 0 && !live ? (
              <Empty>No run yet: fill in the variables and press Run.</Empty>
            ) : (
              shown.map((pair) => (
                <div key={pair.map((p) => p.run.id).join()} className={pair.length > 1 ? "side-by-side" : undefined}>
                  {pair.map((p) => (
                    <RunCard key={p.run.id} shown={p} navigate={navigate} />
                  ))}
                </div>
              ))
            )}
          </section>
        </div>
      )}
    </main>
  );
}
