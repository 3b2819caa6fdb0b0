/**
 * The organization's roles (docs/security.md "Roles"): the four built in and its custom roles,
 * each made of API-key scopes, as the pickers offer them; and, for owners and admins, the custom
 * roles listed, created and deleted (GET/POST/DELETE /api/organizations/:id/roles).
 */
import type { Membership } from "@kiln/sdk";
import { useCallback, useState } from "react";
import { useAction, useLoaded } from "./action.js";
import { call, type ShownError } from "./api.js";
import { ConfirmButton } from "./confirm.js";
import { SCOPES, type Scope } from "./keys.js";
import { CheckList, DataTable, ErrorBox, Field } from "./ui.js";

export type Role = Membership["role"];

export interface RoleChoice {
  role: Role;
  name: string;
  what: string;
  custom: boolean;
}

export const ROLES: RoleChoice[] = [
  {
    role: "viewer",
    name: "Viewer",
    what: "Reads prompts, runs, evaluations and the rest; changes and runs nothing.",
    custom: false,
  },
  { role: "member", name: "Member", what: "Builds and runs prompts, skills and agents.", custom: false },
  { role: "admin", name: "Admin", what: "Also moves protected labels, manages members and API keys.", custom: false },
  {
    role: "owner",
    name: "Owner",
    what: "Everything an admin does, and adds, changes and removes owners.",
    custom: false,
  },
];

interface RoleView {
  name: string;
  description: string;
  scopes: Scope[] | null;
  builtIn: boolean;
}

const whatOf = (r: RoleView) =>
  `${r.description ? `${r.description}. ` : ""}Custom: ${(r.scopes ?? []).join(", ") || "no scope"}.`;

/** The roles a picker offers: the built-in ones, then the organization's custom roles (read once, and on `reload`). */
export function useRoleChoices(path: string) {
  const [error, setError] = useState<ShownError | null>(null);
  const read = useCallback(async () => (await call<{ data: RoleView[] }>("GET", `${path}/roles`)).data, [path]);
  const { value: roles, reload } = useLoaded(read, setError);
  const custom = (roles ?? []).filter((r) => !r.builtIn);
  const choices: RoleChoice[] = [
    ...ROLES,
    ...custom.map((r) => ({ role: r.name as Role, name: r.name, what: whatOf(r), custom: true })),
  ];
  return { choices, custom, error, reload };
}

/** The custom roles, for owners and admins: each with its scopes and a Delete that asks; a form that makes one. */
export function CustomRoles({ path, custom, onChanged }: { path: string; custom: RoleView[]; onChanged: () => void }) {
  const { error, act, submit, busy } = useAction();
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [scopes, setScopes] = useState<Scope[]>(["prompts:read", "runs:read"]);
  const create = submit(async () => {
    await call("POST", `${path}/roles`, { name, ...(description && { description }), scopes });
    setName("");
    setDescription("");
    onChanged();
  });
  const remove = async (role: string) => {
    await call("DELETE", `${path}/roles/${encodeURIComponent(role)}`);
    onChanged();
  };
  return (
    <section className="card" aria-labelledby="custom-roles">
      <h2 id="custom-roles">Custom roles</h2>
      <p className="hint">
        A custom role grants exactly its scopes, the ones API keys have; a member given one ranks with a viewer.
      </p>
      {custom.length > 0 && (
        <DataTable label="Custom roles" columns={["Role", "Scopes", "Actions"]}>
          {custom.map((r) => (
            <tr key={r.name}>
              <td>
                {r.name}
                {r.description && <span className="hint member-email">{r.description}</span>}
              </td>
              <td>
                {(r.scopes ?? []).map((s) => (
                  <span key={s} className="chip">
                    {s}
                  </span>
                ))}
              </td>
              <td>
                <ConfirmButton
                  act={act}
                  run={() => remove(r.name)}
                  className="secondary"
                  question={`Delete the role ${r.name}? A role members still hold cannot be deleted.`}
                  confirmLabel={`Yes, delete ${r.name}`}
                  danger
                >
                  Delete {r.name}
                </ConfirmButton>
              </td>
            </tr>
          ))}
        </DataTable>
      )}
      <form onSubmit={create} noValidate aria-label="Create a custom role">
        <Field label="Role name" value={name} onChange={setName} issue={error?.fields.name} required />
        <Field
          label="Description (optional)"
          value={description}
          onChange={setDescription}
          issue={error?.fields.description}
        />
        <fieldset>
          <legend>Scopes</legend>
          <CheckList values={SCOPES} chosen={scopes} onChange={setScopes} label={(s) => s} />
        </fieldset>
        <ErrorBox error={error} shownFields={["name", "description"]} />
        <button type="submit" disabled={busy}>
          Create role
        </button>
      </form>
    </section>
  );
}
