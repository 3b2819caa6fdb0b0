import type { Kiln, Member, Membership, Model, Organization } from "@kiln/sdk";
import { useCallback, useState } from "react";
import { useLoaded } from "./action.js";
import { call, type Session, type ShownError } from "./api.js";
import { DataTable, Empty, Pending } from "./ui.js";

/** The model catalog with prices (GET /api/models). */
export function Models({ kiln }: { kiln: Kiln }) {
  const [error, setError] = useState<ShownError | null>(null);
  const read = useCallback(async (): Promise<Model[]> => (await kiln.models.list()).data, [kiln]);
  const models = useLoaded(read, setError).value;
  if (!models) return <Pending error={error} what="models" />;
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
  const [error, setError] = useState<ShownError | null>(null);
  const read = useCallback(async () => {
    const path = `/api/organizations/${session.organizationId}/members`;
    return (await call<{ data: Member[] }>("GET", path, undefined, session.accessToken)).data;
  }, [session]);
  const members = useLoaded(read, setError).value;
  if (!members) return <Pending error={error} what="members" />;
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
  const [error, setError] = useState<ShownError | null>(null);
  const read = useCallback(
    () => call<OrganizationView>("GET", `/api/organizations/${session.organizationId}`, undefined, session.accessToken),
    [session],
  );
  const org = useLoaded(read, setError).value;
  if (!org) return <Pending error={error} what="your plan" />;
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
