import { useCallback, useState } from "react";
import { useAction, useFields, useLoaded } from "./action.js";
import { call, type Session, type ShownError } from "./api.js";
import { ErrorBox, Field, Pending } from "./ui.js";

interface TraceSettings {
  organizationId: string;
  retentionDays: number;
  updatedAt: string | null;
}

/** How long the organization's traces are kept (GET and PUT /api/traces/settings): owners and admins change it. */
export function TraceRetention({ session, canChange }: { session: Session; canChange: boolean }) {
  const path = `/api/traces/settings?organizationId=${session.organizationId}`;
  const [loadError, setLoadError] = useState<ShownError | null>(null);
  const read = useCallback(() => call<TraceSettings>("GET", path), [path]);
  const { value: settings, setValue } = useLoaded(read, setLoadError);
  const { error, submit, busy } = useAction();
  const { values, field } = useFields({ retentionDays: "" }, error);
  const [saved, setSaved] = useState<string | null>(null);
  const save = submit(async () => {
    setSaved(null);
    const days = values.retentionDays.trim();
    // A value that is not a number goes as it is: the server names the field and the bounds.
    const next = await call<TraceSettings>("PUT", path, { retentionDays: /^\d+$/.test(days) ? Number(days) : days });
    setValue(next);
    setSaved(`Traces stored from now on are kept ${next.retentionDays} days.`);
  });
  if (!settings) return <Pending error={loadError} what="trace retention" />;
  return (
    <form className="card" aria-labelledby="trace-retention" noValidate onSubmit={save}>
      <h2 id="trace-retention">Trace retention</h2>
      <p className="hint">
        Traces are kept {settings.retentionDays} days (1 to 400). A change applies to traces stored afterwards.
      </p>
      {canChange && (
        <>
          <Field label="Keep traces (days)" type="number" {...field("retentionDays")} />
          <ErrorBox error={error} shownFields={["retentionDays"]} />
          <button type="submit" disabled={busy || !values.retentionDays.trim()}>
            Save retention
          </button>
        </>
      )}
      {saved && (
        <p role="status" className="success">
          {saved}
        </p>
      )}
    </form>
  );
}
