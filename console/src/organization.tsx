import type { Kiln, Member, Membership, Model, Organization } from "@kiln/sdk";
import { useEffect, useState } from "react";
import { call, errorOf, type Session, type ShownError } from "./api.js";
import { DataTable, Empty, ErrorBox, Loading } from "./ui.js";

/** The model catalog with prices (GET /api/models). */
export function Models({ kiln }: { kiln: Kiln }) {
  const [models, setModels] = useState<Model[] | null>(null);
  const [error, setError] = useState<ShownError | null>(null);
  useEffect(() => {
    kiln.models
      .list()
      .then((page) => setModels(page.data))
      .catch((e) => setError(errorOf(e)));
  }, [kiln]);
  if (!models) return <main>{error ? <ErrorBox error={error} /> : <Loading what="models" />}</main>;
  return (
    <main>
      <h1>Models</h1>
      {models.length === 0 ? (
        <Empty>No model is configured.</Empty>
      ) : (
        <DataTable
          label="Models"
          columns={["Model", "Provider", "Input, $ per million tokens", "Output, $ per million tokens"]}
        >
          {models.map((m) => (
            <tr key={m.id}>
              <td>{m.id}</td>
              <td>{m.provider}</td>
              <td>{m.pricing?.inputPerMTokUsd ?? "—"}</td>
              <td>{m.pricing?.outputPerMTokUsd ?? "—"}</td>
            </tr>
          ))}
        </DataTable>
      )}
    </main>
  );
}

/** Members and roles (non-public GET /api/organizations/:id/members). */
export function Users({ session }: { session: Session }) {
  const [members, setMembers] = useState<Member[] | null>(null);
  const [error, setError] = useState<ShownError | null>(null);
  useEffect(() => {
    call<{ data: Member[] }>(
      "GET",
      `/api/organizations/${session.organizationId}/members`,
      undefined,
      session.accessToken,
    )
      .then((r) => setMembers(r.data))
      .catch((e) => setError(errorOf(e)));
  }, [session]);
  if (!members) return <main>{error ? <ErrorBox error={error} /> : <Loading what="members" />}</main>;
  return (
    <main>
      <h1>Users</h1>
      <DataTable label="Members" columns={["Name", "Email", "Role"]}>
        {members.map((m) => (
          <tr key={m.user.id}>
            <td>{m.user.fullName}</td>
            <td>{m.user.email}</td>
            <td>{m.membership.role}</td>
          </tr>
        ))}
      </DataTable>
    </main>
  );
}

interface OrganizationView {
  organization: Organization;
  membership: Membership | null;
}

/** The plan summary and entitlements (non-public GET /api/organizations/:id). */
export function Billing({ session }: { session: Session }) {
  const [org, setOrg] = useState<OrganizationView | null>(null);
  const [error, setError] = useState<ShownError | null>(null);
  useEffect(() => {
    call<OrganizationView>("GET", `/api/organizations/${session.organizationId}`, undefined, session.accessToken)
      .then(setOrg)
      .catch((e) => setError(errorOf(e)));
  }, [session]);
  if (!org) return <main>{error ? <ErrorBox error={error} /> : <Loading what="your plan" />}</main>;
  const o = org.organization;
  return (
    <main>
      <h1>Billing</h1>
      <dl className="summary">
        <dt>Plan</dt>
        <dd>{o.plan === "free" ? "Free" : o.plan}</dd>
        <dt>AI</dt>
        <dd>{o.entitlements.aiEnabled ? "Enabled" : "Not enabled"}</dd>
        <dt>Runs per month</dt>
        <dd>{o.entitlements.monthlyRunLimit || "Unlimited"}</dd>
        <dt>Protected labels</dt>
        <dd>{o.settings.protectedLabels.join(", ") || "none"}</dd>
      </dl>
    </main>
  );
}
