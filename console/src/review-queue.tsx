import type { AnnotationQueue, AnnotationQueueItem } from "@kiln/sdk";
import { useCallback, useEffect, useState } from "react";
import { useAction, useLoaded } from "./action.js";
import { refOfId, useAuthorNames } from "./authors.js";
import { usePagedList } from "./paged-list.js";
import type { PageProps } from "./router.js";
import { formatCount, formatDate } from "./run-format.js";
import { DataTable, Empty, ErrorBox, Link, Loading, Pending, SelectField, StatusBadge } from "./ui.js";

const STATUSES = ["", "pending", "in_review", "completed", "skipped"] as const;

const targetOf = (item: AnnotationQueueItem) =>
  item.target.type === "run" ? `run ${item.target.runId}` : `trace ${item.target.traceId}`;

function Progress({ queue, nameOf }: { queue: AnnotationQueue; nameOf: (id: string) => string }) {
  const p = queue.progress;
  if (!p) return null;
  const total = p.pending + p.inReview + p.completed + p.skipped;
  return (
    <section aria-labelledby="progress">
      <h2 id="progress">Progress</h2>
      <dl className="summary">
        <dt>Done</dt>
        <dd>
          {formatCount(p.completed + p.skipped)} of {formatCount(total)}
        </dd>
        <dt>Pending</dt>
        <dd>{formatCount(p.pending)}</dd>
        <dt>In review</dt>
        <dd>{formatCount(p.inReview)}</dd>
        <dt>Completed</dt>
        <dd>{formatCount(p.completed)}</dd>
        <dt>Skipped</dt>
        <dd>{formatCount(p.skipped)}</dd>
      </dl>
      {p.reviewers.length > 0 && (
        <DataTable label="Per reviewer" columns={["Reviewer", "In review", "Completed", "Skipped"]}>
          {p.reviewers.map((r) => (
            <tr key={r.reviewerId}>
              <td>{nameOf(r.reviewerId)}</td>
              <td className="num">{formatCount(r.inReview)}</td>
              <td className="num">{formatCount(r.completed)}</td>
              <td className="num">{formatCount(r.skipped)}</td>
            </tr>
          ))}
        </DataTable>
      )}
    </section>
  );
}

/** One annotation queue: its progress per status and reviewer, its items by status, and the way in to review. */
export function ReviewQueue({ kiln, session, navigate, id }: PageProps & { id: string }) {
  const { error, setError } = useAction();
  const authorName = useAuthorNames(session);
  const nameOf = (principalId: string) => authorName(refOfId(principalId));
  const [status, setStatus] = useState("");
  const read = useCallback(() => kiln.annotationQueues.get(id), [kiln, id]);
  const { value: queue } = useLoaded(read, setError);
  const list = usePagedList<AnnotationQueueItem>();
  const { start } = list;
  useEffect(
    () => start(kiln.annotationQueues.items(id, { limit: 50, ...(status && { status: status as "pending" }) }).pages()),
    [kiln, id, status, start],
  );
  if (!queue) return <Pending error={error} what="the queue" />;
  return (
    <main>
      <h1>{queue.name}</h1>
      {queue.description && <p>{queue.description}</p>}
      <p>
        <Link to={`/review/${id}/review`} navigate={navigate}>
          Start reviewing
        </Link>{" "}
        · scores:{" "}
        {queue.scoreConfigs.map((c) => `${c.name} (${c.kind}${c.required ? ", required" : ""})`).join(", ") || "none"}
      </p>
      <Progress queue={queue} nameOf={nameOf} />
      <h2>Items</h2>
      <div className="filters">
        <SelectField id="items-status" label="Status" value={status} onChange={setStatus}>
          {STATUSES.map((s) => (
            <option key={s} value={s}>
              {s || "any"}
            </option>
          ))}
        </SelectField>
      </div>
      <ErrorBox error={list.error} />
      {list.items === null ? (
        <Loading what="the items" />
      ) : list.items.length === 0 ? (
        <Empty>No item{status && ` ${status.replace("_", " ")}`}. Add runs from a run's page.</Empty>
      ) : (
        <DataTable label="Items" columns={["Item", "Status", "Reviewer", "Scores", "Added"]}>
          {list.items.map((item) => (
            <tr key={item.id}>
              <td>
                {item.target.type === "run" ? (
                  <Link to={`/runs/${item.target.runId}`} navigate={navigate}>
                    {targetOf(item)}
                  </Link>
                ) : (
                  targetOf(item)
                )}
              </td>
              <td>
                <StatusBadge status={item.status} />
              </td>
              <td>{item.assignee ? nameOf(item.assignee) : "—"}</td>
              <td>
                {item.review
                  ? Object.entries(item.review.scores)
                      .map(([k, v]) => `${k}: ${String(v)}`)
                      .join(", ")
                  : "—"}
                {item.evaluationCase && " · evaluation case"}
              </td>
              <td>{formatDate(item.addedAt)}</td>
            </tr>
          ))}
        </DataTable>
      )}
      {list.more && (
        <button type="button" className="secondary" disabled={list.loading} onClick={() => void list.next()}>
          More items
        </button>
      )}
    </main>
  );
}
