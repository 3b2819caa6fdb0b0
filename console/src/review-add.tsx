import type { AnnotationQueue, Kiln } from "@kiln/sdk";
import { useCallback, useState } from "react";
import { useAction, useLoaded } from "./action.js";
import type { Session } from "./api.js";
import type { Navigate } from "./router.js";
import { ActButton, ErrorBox, Link, SelectField } from "./ui.js";

/** "Add to queue" on a run's page: a queue picked from the organization's, the run added to it. */
export function AddToQueue({
  kiln,
  session,
  runId,
  navigate,
}: {
  kiln: Kiln;
  session: Session;
  runId: string;
  navigate: Navigate;
}) {
  const { error, setError, act, busy } = useAction();
  const [queueId, setQueueId] = useState("");
  const [note, setNote] = useState("");
  const organizationId = session.organizationId ?? "";
  const read = useCallback(
    async () => (await kiln.annotationQueues.list({ organizationId, limit: 200 })).data,
    [kiln, organizationId],
  );
  const queues = useLoaded<AnnotationQueue[]>(read, setError).value;
  if (queues !== null && queues.length === 0)
    return (
      <p>
        No annotation queue yet:{" "}
        <Link to="/review" navigate={navigate}>
          create one
        </Link>{" "}
        to review runs.
      </p>
    );
  const name = queues?.find((q) => q.id === queueId)?.name ?? "";
  return (
    <section aria-labelledby="add-to-queue" className="add-to-queue">
      <h2 id="add-to-queue">Review</h2>
      <SelectField id="queue-pick" label="Annotation queue" value={queueId} onChange={setQueueId}>
        <option value="">choose a queue</option>
        {(queues ?? []).map((q) => (
          <option key={q.id} value={q.id}>
            {q.name}
          </option>
        ))}
      </SelectField>
      <ActButton
        act={act}
        disabled={busy || queueId === ""}
        run={async () => {
          const r = await kiln.annotationQueues.addItems(queueId, { runIds: [runId] });
          setNote(r.skipped > 0 ? `Already in ${name}.` : `Added to ${name}.`);
        }}
      >
        Add to queue
      </ActButton>
      <p role="status" aria-live="polite">
        {note}
      </p>
      <ErrorBox error={error} />
    </section>
  );
}
