import type { Invitation } from "@kiln/sdk";
import { useCallback, useState } from "react";
import { useAction, useLoaded } from "./action.js";
import { call, type ShownError } from "./api.js";
import { formatDay } from "./run-format.js";
import { DataTable, Empty, ErrorBox, Pending } from "./ui.js";

/** POST /api/organizations/:id/invitations: the invitation, its token and link, shown once. */
export interface NewInvitation {
  invitation: Invitation;
  token: string;
  acceptUrl: string;
}

/** The pending invitations (never their links), each with a revoke button. */
export function Invitations({ path, onRevoked }: { path: string; onRevoked: () => void }) {
  const { error, act, busy } = useAction();
  const [loadError, setLoadError] = useState<ShownError | null>(null);
  const [said, setSaid] = useState<string | null>(null);
  const read = useCallback(
    async () => (await call<{ data: Invitation[] }>("GET", `${path}/invitations?limit=200`)).data,
    [path],
  );
  const { value: invitations, reload } = useLoaded(read, setLoadError);
  const revoke = (i: Invitation) =>
    act(async () => {
      setSaid(null);
      await call("DELETE", `${path}/invitations/${i.id}`);
      setSaid(`The invitation for ${i.email} is revoked: its link no longer works.`);
      onRevoked();
      reload();
    });
  return (
    <section aria-labelledby="invitation-list">
      <h2 id="invitation-list">Pending invitations</h2>
      {!invitations ? (
        <Pending error={loadError} what="invitations" />
      ) : invitations.length === 0 ? (
        <Empty>No pending invitation.</Empty>
      ) : (
        <DataTable label="Invitations" columns={["Email", "Role", "Expires", "Actions"]}>
          {invitations.map((i) => (
            <tr key={i.id}>
              <td className="member-email">{i.email}</td>
              <td>
                <span className={`chip role-${i.role}`}>{i.role}</span>
              </td>
              <td className="nowrap">{formatDay(i.expiresAt)}</td>
              <td>
                <button
                  type="button"
                  className="secondary small"
                  disabled={busy}
                  aria-label={`Revoke the invitation for ${i.email}`}
                  onClick={() => revoke(i)}
                >
                  Revoke
                </button>
              </td>
            </tr>
          ))}
        </DataTable>
      )}
      <ErrorBox error={error} />
      {said && (
        <p role="status" className="success">
          {said}
        </p>
      )}
    </section>
  );
}
