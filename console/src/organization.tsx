import type { Member, Membership, Organization } from "@kiln/sdk";
import { useCallback, useState } from "react";
import { useAction, useFields, useLoaded } from "./action.js";
import { call, type Session, type ShownError } from "./api.js";
import { formatDay } from "./run-format.js";
import { TraceRetention } from "./trace-retention.js";
import { DataTable, ErrorBox, Field, Pending, SelectField } from "./ui.js";

type Role = Membership["role"];
const ROLES: { role: Role; name: string; what: string }[] = [
  { role: "member", name: "Member", what: "Builds and runs prompts, skills and agents." },
  { role: "admin", name: "Admin", what: "Also moves protected labels, manages members and API keys." },
  { role: "owner", name: "Owner", what: "Everything an admin does, and adds owners." },
];

const membersPath = (session: Session) => `/api/organizations/${session.organizationId}/members`;

/** Members and roles: the list, and adding a signed-up colleague with a role (owners and admins). */
export function Members({ session }: { session: Session }) {
  const { error, submit, busy } = useAction();
  const [loadError, setLoadError] = useState<ShownError | null>(null);
  const { values, field, set } = useFields({ email: "", role: "member" }, error);
  const [added, setAdded] = useState<string | null>(null);
  const read = useCallback(
    async () => (await call<{ data: Member[] }>("GET", `${membersPath(session)}?limit=200`)).data,
    [session],
  );
  const { value: members, reload } = useLoaded(read, setLoadError);
  const add = submit(async () => {
    setAdded(null);
    const m = await call<Member>("POST", membersPath(session), values);
    setAdded(`${m.user.fullName || m.user.email} joined as ${m.membership.role}.`);
    set("email", "");
    reload();
  });
  if (!members) return <Pending error={loadError} what="members" />;
  return (
    <main>
      <h1>Members</h1>
      <div className="columns top">
        <form className="card" onSubmit={add} noValidate aria-labelledby="add-member">
          <h2 id="add-member">Add a member</h2>
          <p className="hint">They sign up at Kiln first; then they find this organization when they sign in.</p>
          <Field label="Email" type="email" {...field("email")} autoComplete="off" required />
          <SelectField id="member-role" label="Role" value={values.role} onChange={(v) => set("role", v)}>
            {ROLES.map((r) => (
              <option key={r.role} value={r.role}>
                {r.name}
              </option>
            ))}
          </SelectField>
          <p className="hint">{ROLES.find((r) => r.role === values.role)?.what}</p>
          <ErrorBox error={error} shownFields={["email"]} />
          <button type="submit" disabled={busy}>
            {busy ? "Adding…" : "Add member"}
          </button>
          {added && (
            <p role="status" className="success">
              {added}
            </p>
          )}
        </form>
        <section aria-labelledby="member-list">
          <h2 id="member-list">
            {members.length} {members.length === 1 ? "member" : "members"}
          </h2>
          <DataTable label="Members" columns={["Name", "Email", "Role", "Since"]}>
            {members.map((m) => (
              <tr key={m.user.id}>
                <td>{m.user.fullName || "—"}</td>
                <td>{m.user.email}</td>
                <td>
                  <span className={`chip role-${m.membership.role}`}>{m.membership.role}</span>
                </td>
                <td className="nowrap">{formatDay(m.membership.createdAt)}</td>
              </tr>
            ))}
          </DataTable>
        </section>
      </div>
    </main>
  );
}

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
