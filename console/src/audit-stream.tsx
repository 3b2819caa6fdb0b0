import type { AuditStream, AuditStreamWithSecret } from "@kiln/sdk";
import { useCallback, useEffect, useState } from "react";
import { type Act, useAction, useLoaded } from "./action.js";
import { call, errorOf } from "./api.js";
import { ConfirmButton } from "./confirm.js";
import { formatDate } from "./run-format.js";
import { CopyButton, ErrorBox, Field, Pending } from "./ui.js";

/** What the panel knows: the stream, none set (404), or the caller may not manage it (403: not shown). */
type Loaded = { stream: AuditStream | null } | "refused";

/** The stream at `path`; none set is a 404, a caller who may not manage it a 403. */
async function readStream(path: string): Promise<Loaded> {
  try {
    return { stream: await call<AuditStream>("GET", path) };
  } catch (e) {
    const status = errorOf(e).status;
    if (status === 404) return { stream: null };
    if (status === 403) return "refused";
    throw e;
  }
}

/** How far the stream got, in words (its cursor: docs/governance.md "Streaming to a webhook"). */
function deliveryOf(d: AuditStream["delivery"]): string[] {
  const lines = [
    d.acknowledgedSequence === 0
      ? "Nothing acknowledged yet."
      : `Acknowledged up to entry ${d.acknowledgedSequence}${d.acknowledgedAt ? `, ${formatDate(d.acknowledgedAt)}` : ""}.`,
  ];
  if (d.failures > 0)
    lines.push(
      `The last ${d.failures === 1 ? "send" : `${d.failures} sends`} failed (${d.lastError ?? "no answer"})${d.retryAt ? `; the next try is ${formatDate(d.retryAt)}` : ""}.`,
    );
  else if (d.lastError && d.lastErrorAt) lines.push(`Last failure: ${d.lastError}, ${formatDate(d.lastErrorAt)}.`);
  return lines;
}

/** A secret just made: shown once, with a button that copies it. */
function NewSecret({ secret }: { secret: string }) {
  return (
    <div className="card new-key">
      <p>
        <strong>Copy the signing secret now:</strong> it is shown once. Your receiver checks each request's
        webhook-signature with it (Standard Webhooks).
      </p>
      <code className="secret">{secret}</code>
      <CopyButton key={secret} text={secret} what="secret" />
    </div>
  );
}

/** A stream's delivery state and what can be done to it: refresh, rotate the secret, remove (both asked for first). */
function StreamState(props: {
  stream: AuditStream;
  act: Act;
  reload: () => Promise<void>;
  rotate: () => Promise<void>;
  remove: () => Promise<void>;
}) {
  const { stream, act } = props;
  return (
    <>
      <div role="status" aria-label="Delivery">
        {deliveryOf(stream.delivery).map((line) => (
          <p key={line}>{line}</p>
        ))}
      </div>
      <div className="actions">
        <button type="button" className="secondary" onClick={() => act(props.reload)}>
          Refresh delivery
        </button>
        <ConfirmButton
          act={act}
          run={props.rotate}
          className="secondary"
          question="Rotate the signing secret? Requests are signed with the new secret only: until your receiver checks it, the receiver refuses them and they are sent again."
          confirmLabel="Yes, rotate the secret"
        >
          Rotate the secret
        </ConfirmButton>
        <ConfirmButton
          act={act}
          run={props.remove}
          className="secondary"
          question={`Stop streaming to ${stream.url}? Nothing more is sent; a stream set again starts from the log's first entry with a new secret.`}
          confirmLabel="Yes, remove the stream"
          danger
        >
          Remove the stream
        </ConfirmButton>
      </div>
    </>
  );
}

/**
 * "Stream to a webhook" on the Audit log page (PUT, GET, DELETE /api/organizations/:id/audit-stream
 * and its rotate-secret): owners and admins set the URL, copy the secret once, see how far the
 * stream got, rotate the secret and remove the stream (both asked for first). Others see nothing:
 * the API refuses them (403).
 */
export function AuditStreamPanel({ organizationId }: { organizationId: string }) {
  const path = `/api/organizations/${organizationId}/audit-stream`;
  const [loadError, setLoadError] = useState<ReturnType<typeof errorOf> | null>(null);
  const read = useCallback(() => readStream(path), [path]);
  const { value: loaded, setValue, reload } = useLoaded(read, setLoadError);
  const { error, edited, act, submit, busy } = useAction();
  const [url, setUrl] = useState("");
  const [secret, setSecret] = useState<string | null>(null);
  const [said, setSaid] = useState<string | null>(null);
  const stream = loaded && loaded !== "refused" ? loaded.stream : null;
  useEffect(() => setUrl(stream?.url ?? ""), [stream?.url]);
  /** Shows what a change answered: the stream, and its secret when the change made one. */
  const changed = async (answer: Promise<AuditStreamWithSecret>, say: (s: AuditStream, made: boolean) => string) => {
    setSaid(null);
    const { secret: made, ...saved } = await answer;
    setSecret(made ?? null);
    setValue({ stream: saved });
    setSaid(say(saved, made !== undefined));
  };
  const save = submit(() =>
    changed(call("PUT", path, { url: url.trim() }), (s, made) =>
      made ? `Streaming the log to ${s.url}, from its first entry.` : `The stream now goes to ${s.url}.`,
    ),
  );
  const rotate = () =>
    changed(
      call("POST", `${path}/rotate-secret`),
      () => "The secret was rotated: requests are signed with the new one only.",
    );
  const remove = async () => {
    await call("DELETE", path);
    setSecret(null);
    setValue({ stream: null });
    setSaid("The stream was removed: nothing more is sent.");
  };
  if (loaded === "refused") return null;
  if (!loaded) return <Pending error={loadError} what="the audit stream" />;
  return (
    <section className="card" aria-labelledby="audit-stream">
      <h2 id="audit-stream">Stream to a webhook</h2>
      <p className="hint">
        Every entry of this log, from its first, POSTed to your URL as JSON, oldest first, and signed. Sent again until
        your receiver answers 2xx.
      </p>
      <form onSubmit={save} noValidate aria-label="Audit webhook">
        <Field
          label="Webhook URL"
          value={url}
          onChange={(v) => {
            setUrl(v);
            edited("url");
          }}
          issue={error?.fields.url}
          placeholder="https://siem.example.com/kiln-audit"
          required
        />
        <ErrorBox error={error} shownFields={["url"]} />
        <button type="submit" disabled={busy || url.trim() === "" || url.trim() === stream?.url}>
          {stream ? "Save URL" : "Start streaming"}
        </button>
      </form>
      {said && (
        <p role="status" className="success">
          {said}
        </p>
      )}
      {secret && <NewSecret secret={secret} />}
      {stream && <StreamState stream={stream} act={act} reload={reload} rotate={rotate} remove={remove} />}
    </section>
  );
}
