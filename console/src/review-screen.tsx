import type { AnnotationQueueClaim, ScoreConfig, Skill } from "@kiln/sdk";
import { useCallback, useEffect, useId, useState } from "react";
import { useAction, useLoaded } from "./action.js";
import { errorOf } from "./api.js";
import { ItemContent, outputOf } from "./review-content.js";
import type { PageProps } from "./router.js";
import type { Run } from "./run-names.js";
import { ActButton, Empty, ErrorBox, Field, Link, Pending, SelectField } from "./ui.js";

type Value = boolean | number | string;

function ScoreControl({
  config,
  value,
  onChange,
  issue,
}: {
  config: ScoreConfig;
  value: Value | undefined;
  onChange: (v: Value | undefined) => void;
  issue?: string;
}) {
  const id = useId();
  const label = `${config.name}${config.required ? " (required)" : ""}`;
  if (config.kind === "boolean")
    return (
      <fieldset className="score">
        <legend>{label}</legend>
        {[true, false].map((v) => (
          <label key={String(v)} className="check">
            <input type="radio" name={id} checked={value === v} onChange={() => onChange(v)} /> {v ? "Yes" : "No"}
          </label>
        ))}
        {issue && <span className="issue">{issue}</span>}
      </fieldset>
    );
  if (config.kind === "numeric")
    return (
      <Field
        label={`${label}, ${config.min} to ${config.max}`}
        type="number"
        value={value === undefined ? "" : String(value)}
        onChange={(v) => onChange(v === "" ? undefined : Number(v))}
        issue={issue}
      />
    );
  return (
    <SelectField
      id={id}
      label={label}
      value={typeof value === "string" ? value : ""}
      onChange={(v) => onChange(v || undefined)}
    >
      <option value="">not given</option>
      {(config.options ?? []).map((o) => (
        <option key={o} value={o}>
          {o}
        </option>
      ))}
    </SelectField>
  );
}

/** The corrected output as the case's expected output: JSON when it reads as JSON, else the text. */
function expectedOf(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The reviewer's screen: one item at a time, leased to the reviewer; scores, comment, skip, and to a case. */
export function ReviewScreen({ kiln, session, navigate, id }: PageProps & { id: string }) {
  const { error, setError, edited, act, busy } = useAction();
  const readQueue = useCallback(() => kiln.annotationQueues.get(id), [kiln, id]);
  const queue = useLoaded(readQueue, setError).value;
  const organizationId = session.organizationId ?? "";
  const readSkills = useCallback(
    async () => (await kiln.skills.list({ organizationId, limit: 200 })).data,
    [kiln, organizationId],
  );
  const skills = useLoaded<Skill[]>(readSkills, setError).value;
  const [claim, setClaim] = useState<AnnotationQueueClaim | null>(null);
  const [scores, setScores] = useState<Record<string, Value>>({});
  const [comment, setComment] = useState("");
  const [skillId, setSkillId] = useState("");
  const [corrected, setCorrected] = useState("");
  const [note, setNote] = useState("");
  const next = useCallback(async () => {
    const c = await kiln.annotationQueues.next(id);
    setClaim(c);
    setScores({});
    setComment("");
    setCorrected(c.content?.run ? outputOf(c.content.run as Run) : "");
  }, [kiln, id]);
  useEffect(() => {
    next().catch((e: unknown) => setError(errorOf(e)));
  }, [next, setError]);
  if (!queue || !claim) return <Pending error={error} what="the next item" />;
  const item = claim.item;
  const fields = error?.fields ?? {};
  const done = (message: string) => async () => {
    setNote(message);
    await next();
  };
  return (
    <main>
      <h1>Review: {queue.name}</h1>
      <p>
        <Link to={`/review/${id}`} navigate={navigate}>
          Back to the queue
        </Link>
      </p>
      <p role="status" aria-live="polite">
        {note}
      </p>
      {!item || !claim.content ? (
        <Empty>Nothing left to review in this queue.</Empty>
      ) : (
        <div className="columns">
          <section aria-labelledby="item" className="card">
            <h2 id="item">Item</h2>
            <ItemContent content={claim.content} />
          </section>
          <section aria-labelledby="verdict" className="card">
            <h2 id="verdict">Your review</h2>
            {queue.scoreConfigs.map((c) => (
              <ScoreControl
                key={c.name}
                config={c}
                value={scores[c.name]}
                issue={fields[`scores.${c.name}`]}
                onChange={(v) => {
                  edited(`scores.${c.name}`);
                  setScores(({ [c.name]: _, ...rest }) => (v === undefined ? rest : { ...rest, [c.name]: v }));
                }}
              />
            ))}
            <Field
              label="Comment"
              multiline
              rows={3}
              value={comment}
              onChange={(v) => {
                edited("comment");
                setComment(v);
              }}
              issue={fields.comment}
            />
            <ErrorBox error={error} shownFields={[...queue.scoreConfigs.map((c) => `scores.${c.name}`), "comment"]} />
            <div className="actions">
              <ActButton
                act={act}
                disabled={busy}
                run={async () => {
                  await kiln.annotationQueues.review(id, item.id, { scores, comment });
                  await done("Review saved.")();
                }}
              >
                Submit
              </ActButton>
              <ActButton
                act={act}
                className="secondary"
                disabled={busy}
                run={async () => {
                  await kiln.annotationQueues.skip(id, item.id);
                  await done("Item skipped.")();
                }}
              >
                Skip
              </ActButton>
              <ActButton
                act={act}
                className="secondary"
                disabled={busy}
                run={async () => {
                  await kiln.annotationQueues.release(id, item.id);
                  navigate(`/review/${id}`);
                }}
              >
                Give back
              </ActButton>
            </div>
            {claim.content.run && (
              <fieldset className="to-case">
                <legend>Add to evaluation cases</legend>
                <SelectField id="case-skill" label="Skill" value={skillId} onChange={setSkillId}>
                  <option value="">choose a skill</option>
                  {(skills ?? []).map((s) => (
                    <option key={s.id} value={s.id}>
                      {s.name}
                    </option>
                  ))}
                </SelectField>
                <Field
                  label="Corrected output (expected output)"
                  multiline
                  rows={4}
                  value={corrected}
                  onChange={setCorrected}
                  issue={fields.expectedOutput}
                />
                <ActButton
                  act={act}
                  className="secondary"
                  disabled={busy || skillId === ""}
                  run={async () => {
                    const r = await kiln.annotationQueues.toCase(id, item.id, {
                      skillId,
                      ...(corrected.trim() !== "" && { expectedOutput: expectedOf(corrected) }),
                    });
                    setNote(`Added to the evaluation cases (${r.evaluationCaseId}).`);
                  }}
                >
                  Add to evaluation cases
                </ActButton>
              </fieldset>
            )}
          </section>
        </div>
      )}
    </main>
  );
}
