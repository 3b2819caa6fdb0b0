import type { AnnotationQueue } from "@kiln/sdk";
import { useCallback, useState } from "react";
import { useAction, useFields, useLoaded } from "./action.js";
import { LinkList, Listed } from "./resource-list.js";
import type { PageProps } from "./router.js";
import { NEW_SCORE, type ScoreRow, ScoreSetEditor, scoreConfigsOf, scoreFieldsOf } from "./score-set-editor.js";
import { ErrorBox, Field } from "./ui.js";

/** Review: the organization's annotation queues, and a new queue with its score set (docs/review.md). */
export function ReviewQueues({ kiln, session, navigate }: PageProps) {
  const { error, setError, submit, busy } = useAction();
  const { values, set, field } = useFields({ name: "", description: "" }, error);
  const [scores, setScores] = useState<ScoreRow[]>([{ ...NEW_SCORE, name: "correct", required: true }]);
  const organizationId = session.organizationId ?? "";
  const read = useCallback(
    async () => (await kiln.annotationQueues.list({ organizationId, limit: 200 })).data,
    [kiln, organizationId],
  );
  const { value: queues, reload } = useLoaded<AnnotationQueue[]>(read, setError);
  const create = submit(async () => {
    const queue = await kiln.annotationQueues.create({
      organizationId,
      name: values.name,
      description: values.description,
      scoreConfigs: scoreConfigsOf(scores),
    });
    set("name", "");
    set("description", "");
    reload();
    navigate(`/review/${queue.id}`);
  });
  return (
    <main>
      <h1>Review</h1>
      <p>
        Annotation queues hold runs and traces for people to review one at a time, with scores from the queue's set. Add
        runs from a run's page.
      </p>
      <div className="columns">
        <form className="card" onSubmit={create} noValidate>
          <h2>New queue</h2>
          <Field label="Queue name" {...field("name")} required />
          <Field label="Description" multiline rows={2} {...field("description")} />
          <ScoreSetEditor rows={scores} onChange={setScores} issues={error?.fields ?? {}} />
          <ErrorBox error={error} shownFields={["name", "description", ...scoreFieldsOf(scores)]} />
          <button type="submit" disabled={busy}>
            Create queue
          </button>
        </form>
        <section aria-labelledby="queues">
          <h2 id="queues">Queues</h2>
          <Listed items={queues} what="the queues" empty="No queue yet.">
            {(qs) => (
              <LinkList
                items={qs}
                to={(q) => `/review/${q.id}`}
                label={(q) => q.name}
                summary={(q) => `scores: ${q.scoreConfigs.map((c) => c.name).join(", ") || "none"}`}
                navigate={navigate}
              />
            )}
          </Listed>
        </section>
      </div>
    </main>
  );
}
