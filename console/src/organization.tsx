import type { Membership, Organization } from "@kiln/sdk";
import { useCallback, useState } from "react";
import { useAction, useLoaded } from "./action.js";
import { call, type Session, type ShownError } from "./api.js";
import { TraceRetention } from "./trace-retention.js";
import { ErrorBox, Field, Pending } from "./ui.js";

interface OrganizationView {
  organization: Organization;
  membership: Membership | null;
}

/** The organization's protected labels, its trace retention and its plan (GET and PATCH /api/organizations/:id). */
export function OrganizationSettings({ session }: { session: Session }) {
  const [loadError, setLoadError] = useState<ShownError | null>(null);
  const path = `/api/organizations/${session.organizationId}`;
  const read = useCallback(() => call<OrganizationView>("GET", path), [path]);
  const { value: view, setValue } = useLoaded(read, setLoadError);
  if (!view) return <Pending error={loadError} what="your organization" />;
  return (
    <main>
      <h1>Settings</h1>
      <div className="columns top">
        <ProtectedLabels
          path={path}
          labels={view.organization.settings.protectedLabels}
          onSaved={(organization) => setValue({ ...view, organization })}
        />
        <TraceRetention
          session={session}
          canChange={view.membership?.role === "owner" || view.membership?.role === "admin"}
        />
        <section className="card" aria-labelledby="plan">
          <h2 id="plan">Plan</h2>
          <dl className="summary">
            <PlanTerms organization={view.organization} />
            <dt>Your role</dt>
            <dd>{view.membership?.role ?? "—"}</dd>
          </dl>
        </section>
      </div>
    </main>
  );
}

/** The labels only owners and admins (and API keys with labels:write) may move: add and remove. */
function ProtectedLabels({
  path,
  labels,
  onSaved,
}: {
  path: string;
  labels: string[];
  onSaved: (organization: Organization) => void;
}) {
  const { error, act, busy } = useAction();
  const [label, setLabel] = useState("");
  const [saved, setSaved] = useState<string | null>(null);
  const save = (next: string[], what: string) =>
    act(async () => {
      setSaved(null);
      onSaved(await call<Organization>("PATCH", path, { settings: { protectedLabels: next } }));
      setSaved(what);
    });
  return (
    <form
      className="card"
      aria-labelledby="protected"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        const name = label.trim();
        if (!name) return;
        void save([...labels.filter((l) => l !== name), name], `"${name}" is protected.`).then(() => setLabel(""));
      }}
    >
      <h2 id="protected">Protected labels</h2>
      <p className="hint">Only owners and admins move these labels; moving one asks for confirmation.</p>
      {labels.length === 0 ? (
        <p className="empty">No label is protected: add production to guard what your users get.</p>
      ) : (
        <ul className="label-list">
          {labels.map((l) => (
            <li key={l}>
              <span className="chip production">{l}</span>
              <button
                type="button"
                className="secondary small"
                disabled={busy}
                onClick={() =>
                  save(
                    labels.filter((x) => x !== l),
                    `"${l}" is no longer protected.`,
                  )
                }
              >
                Unprotect {l}
              </button>
            </li>
          ))}
        </ul>
      )}
      <Field
        label="Label to protect"
        value={label}
        onChange={setLabel}
        issue={error?.fields["settings.protectedLabels"]}
      />
      <ErrorBox error={error} shownFields={["settings.protectedLabels"]} />
      <button type="submit" disabled={busy || !label.trim()}>
        Protect label
      </button>
      {saved && (
        <p role="status" className="success">
          {saved}
        </p>
      )}
    </form>
  );
}

/** An organization's plan as its terms: name, plan, AI, runs per month (a `<dl>`'s items). */
export function PlanTerms({ organization }: { organization: Organization }) {
  const limit = organization.entitlements.monthlyRunLimit;
  return (
    <>
      <dt>Organization</dt>
      <dd>{organization.name}</dd>
      <dt>Plan</dt>
      <dd>{organization.plan === "free" ? "Free" : organization.plan}</dd>
      <dt>AI</dt>
      <dd>{organization.entitlements.aiEnabled ? "Enabled" : "Not enabled"}</dd>
      <dt>Runs per month</dt>
      <dd>{limit ? new Intl.NumberFormat("en-US").format(limit) : "Unlimited"}</dd>
    </>
  );
}
