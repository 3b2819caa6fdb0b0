import type { Member } from "@kiln/sdk";
import { useCallback, useRef, useState } from "react";
import { useAction, useFields, useLoaded } from "./action.js";
import { call, type Session, type ShownError } from "./api.js";
import { useConfirmFocus } from "./confirm.js";
import { Invitations, type NewInvitation } from "./invitations.js";
import { CustomRoles, type Role, type RoleChoice, useRoleChoices } from "./roles.js";
import { formatDay } from "./run-format.js";
import { CopyButton, DataTable, ErrorBox, Field, Pending, SelectField } from "./ui.js";

const RANKS: Record<string, number> = { viewer: 0, member: 1, admin: 2, owner: 3 };
/** A custom role ranks with the viewer: below a member's (docs/security.md "Roles"). */
const rank = (role: Role) => RANKS[role] ?? 0;
const manages = (role: Role | undefined) => role === "owner" || role === "admin";

export const organizationPath = (session: Session) => `/api/organizations/${session.organizationId}`;
const nameOf = (m: Member) => m.user.fullName || m.user.email;

/**
 * Members and roles (docs/console.md "Members"): the list; for owners and admins, adding a
 * signed-up colleague or inviting anyone by a link, changing a role (lowering one asks first),
 * removing a member (asks first), the pending invitations. Everyone may leave.
 */
export function Members({ session }: { session: Session }) {
  const { error, act, submit, busy } = useAction();
  const [loadError, setLoadError] = useState<ShownError | null>(null);
  const { values, field, set } = useFields({ email: "", role: "member" }, error);
  const [said, setSaid] = useState<string | null>(null);
  const [link, setLink] = useState<{ email: string; url: string; expiresAt: string } | null>(null);
  const [invited, setInvited] = useState(0);
  const path = organizationPath(session);
  const roles = useRoleChoices(path);
  const read = useCallback(
    async () => (await call<{ data: Member[] }>("GET", `${path}/members?limit=200`)).data,
    [path],
  );
  const { value: members, reload } = useLoaded(read, setLoadError);
  // Said once the list shows it (a removed member gone, a role changed).
  const done = (sentence: string) => {
    void reload().then(() => setSaid(sentence));
  };
  const add = submit(async () => {
    setSaid(null);
    setLink(null);
    const m = await call<Member>("POST", `${path}/members`, values);
    set("email", "");
    done(`${nameOf(m)} joined as ${m.membership.role}.`);
  });
  const invite = () =>
    act(async () => {
      setSaid(null);
      const r = await call<NewInvitation>("POST", `${path}/invitations`, values);
      setLink({ email: r.invitation.email, url: r.acceptUrl, expiresAt: r.invitation.expiresAt });
      set("email", "");
      setInvited((n) => n + 1);
    });
  if (!members) return <Pending error={loadError} what="members" />;
  const myRole = members.find((m) => m.user.id === session.userId)?.membership.role;
  return (
    <main>
      <h1>Members</h1>
      <div className="columns top">
        {manages(myRole) ? (
          <form className="card" onSubmit={add} noValidate aria-labelledby="add-member">
            <h2 id="add-member">Add a member</h2>
            <p className="hint">
              Add someone who has a Kiln account, or invite anyone by a link that works once, for 7 days.
            </p>
            <Field label="Email" type="email" {...field("email")} autoComplete="off" required />
            <SelectField id="member-role" label="Role" value={values.role} onChange={(v) => set("role", v)}>
              {roles.choices
                .filter((r) => myRole === "owner" || r.role !== "owner")
                .map((r) => (
                  <option key={r.role} value={r.role}>
                    {r.name}
                  </option>
                ))}
            </SelectField>
            <p className="hint">{roles.choices.find((r) => r.role === values.role)?.what}</p>
            <ErrorBox error={error} shownFields={["email"]} />
            <div className="actions">
              <button type="submit" disabled={busy}>
                {busy ? "Working…" : "Add member"}
              </button>
              <button type="button" className="secondary" disabled={busy} onClick={invite}>
                Invite by link
              </button>
            </div>
            {link && <InvitationLink {...link} />}
          </form>
        ) : (
          <p className="card hint">Owners and admins add members, invite people and change roles.</p>
        )}
        <section aria-labelledby="member-list">
          <h2 id="member-list">
            {members.length} {members.length === 1 ? "member" : "members"}
          </h2>
          <MemberTable
            members={members}
            me={session.userId ?? ""}
            myRole={myRole}
            path={path}
            choices={roles.choices}
            onDone={done}
          />
          {said && (
            <p role="status" className="success">
              {said}
            </p>
          )}
          {/* Keyed by the invitations made here: a new one reads the list again. */}
          {manages(myRole) && <Invitations key={invited} path={path} onRevoked={() => setLink(null)} />}
          {manages(myRole) && <CustomRoles path={path} custom={roles.custom} onChanged={roles.reload} />}
        </section>
      </div>
    </main>
  );
}

/** The link of an invitation just made: shown once, with a button that copies it. */
function InvitationLink({ email, url, expiresAt }: { email: string; url: string; expiresAt: string }) {
  return (
    <section className="new-key" aria-label="Invitation link">
      <p>
        <strong>Send this link to {email}:</strong> it is shown once, works once, until {formatDay(expiresAt)}.
      </p>
      <code className="secret">{url}</code>
      <CopyButton text={url} what="link" />
    </section>
  );
}

interface Change {
  member: Member;
  role: Role | null;
}

/** The members with their roles: a role picker and a remove button where the viewer may use them. */
function MemberTable(props: {
  members: Member[];
  me: string;
  myRole: Role | undefined;
  path: string;
  /** The roles the pickers offer: the built-in ones and the organization's custom roles. */
  choices: RoleChoice[];
  onDone: (sentence: string) => void;
}) {
  const { members, me, myRole, path, onDone } = props;
  const { error, setError, act, busy } = useAction();
  // A change waiting for a yes: lowering a role, or removing (role null).
  const [asking, setAsking] = useState<Change | null>(null);
  const apply = ({ member, role }: Change) =>
    act(async () => {
      setAsking(null);
      const at = `${path}/members/${member.user.id}`;
      if (role === null) {
        await call("DELETE", at);
        // Leaving: the console has nothing more to show here.
        if (member.user.id === me) location.assign("/");
        else onDone(`${nameOf(member)} was removed.`);
      } else {
        const changed = await call<Member>("PATCH", at, { role });
        onDone(`${nameOf(member)} is now ${changed.membership.role}.`);
      }
    });
  const choose = (member: Member, role: Role) => {
    setError(null);
    if (rank(role) < rank(member.membership.role)) setAsking({ member, role });
    else void apply({ member, role });
  };
  // Owners change anyone; admins change members and admins; anyone lowers their own role or leaves.
  const mayChange = (m: Member) =>
    m.user.id === me || myRole === "owner" || (myRole === "admin" && m.membership.role !== "owner");
  const offered = (m: Member) =>
    props.choices.filter((r) =>
      m.user.id === me ? rank(r.role) <= rank(m.membership.role) : myRole === "owner" || r.role !== "owner",
    );
  return (
    <>
      <DataTable label="Members" columns={["Member", "Role", "Since", "Actions"]}>
        {members.map((m) => {
          const name = nameOf(m);
          const self = m.user.id === me;
          return (
            <tr key={m.user.id}>
              <td>
                {m.user.fullName || "—"}
                <span className="hint member-email">{m.user.email}</span>
              </td>
              <td>
                {mayChange(m) ? (
                  <select
                    className="role-select"
                    aria-label={`Role of ${name}`}
                    disabled={busy}
                    value={m.membership.role}
                    onChange={(e) => choose(m, e.target.value as Role)}
                  >
                    {offered(m).map((r) => (
                      <option key={r.role} value={r.role}>
                        {r.role}
                      </option>
                    ))}
                  </select>
                ) : (
                  <span className={`chip role-${m.membership.role}`}>{m.membership.role}</span>
                )}
              </td>
              <td className="nowrap">{formatDay(m.membership.createdAt)}</td>
              <td className="nowrap">
                {mayChange(m) && (
                  <button
                    type="button"
                    className="secondary small"
                    disabled={busy}
                    aria-label={self ? "Leave the organization" : `Remove ${name}`}
                    onClick={() => setAsking({ member: m, role: null })}
                  >
                    {self ? "Leave" : "Remove"}
                  </button>
                )}
              </td>
            </tr>
          );
        })}
      </DataTable>
      <ErrorBox error={error} />
      {asking && (
        <Confirm change={asking} self={asking.member.user.id === me} onYes={apply} onNo={() => setAsking(null)} />
      )}
    </>
  );
}

/** "Are you sure?" for lowering a role or removing a member, in words. */
function Confirm({
  change,
  self,
  onYes,
  onNo,
}: {
  change: Change;
  self: boolean;
  onYes: (c: Change) => void;
  onNo: () => void;
}) {
  const name = nameOf(change.member);
  const who = self ? "You" : "They";
  const loses =
    change.role === "member"
      ? "will no longer manage members, API keys or protected labels."
      : "will no longer add, change or remove owners.";
  const question =
    change.role === null
      ? self
        ? "Leave this organization? You lose access to it at once."
        : `Remove ${name}? They lose access to this organization at once.`
      : `Make ${self ? "yourself" : name} ${change.role === "admin" ? "an admin" : "a member"}? ${who} ${loses}`;
  const cancel = useRef<HTMLButtonElement>(null);
  useConfirmFocus(true, cancel);
  return (
    <div
      role="alertdialog"
      aria-labelledby="member-confirm"
      className="confirm"
      onKeyDown={(e) => {
        if (e.key === "Escape") onNo();
      }}
    >
      <p id="member-confirm">{question}</p>
      <div className="actions">
        <button type="button" className="danger" onClick={() => onYes(change)}>
          {change.role === null ? (self ? "Yes, leave" : `Yes, remove ${name}`) : "Yes, change the role"}
        </button>
        <button ref={cancel} type="button" className="secondary" onClick={onNo}>
          Cancel
        </button>
      </div>
    </div>
  );
}
