import { useCallback, useEffect, useRef, useState } from "react";
import { useLoaded } from "./action.js";
import { call, errorOf, type Session, type ShownError } from "./api.js";
import type { Navigate } from "./router.js";
import { ErrorBox } from "./ui.js";

/** One of the signed-in user's organizations, as `GET /api/organizations` lists it. */
interface Mine {
  organization: { id: string; name: string };
  membership: { role: string };
}

/** The most organizations the switcher lists (the route's largest page). */
const SHOWN = 200;

/**
 * The current organization's name and, behind a small toggle, the user's other organizations to
 * switch to and "Create organization". A user with one organization sees its name and the toggle.
 */
export function OrganizationSwitcher({
  session,
  onSwitch,
  navigate,
}: {
  session: Session;
  onSwitch: (organizationId: string) => Promise<void>;
  navigate: Navigate;
}) {
  const [open, setOpen] = useState(false);
  const [error, setError] = useState<ShownError | null>(null);
  const toggle = useRef<HTMLButtonElement>(null);
  const box = useRef<HTMLDivElement>(null);
  // Read on mount: the shell mounts the switcher anew for each organization it opens.
  const read = useCallback(() => call<{ data: Mine[] }>("GET", `/api/organizations?limit=${SHOWN}`), []);
  const { value } = useLoaded(read, setError);
  const mine = value?.data ?? [];
  const several = mine.length > 1;

  useEffect(() => {
    if (!open) return;
    const away = (e: MouseEvent) => {
      if (!box.current?.contains(e.target as Node)) setOpen(false);
    };
    document.addEventListener("mousedown", away);
    return () => document.removeEventListener("mousedown", away);
  }, [open]);

  const close = () => {
    setOpen(false);
    toggle.current?.focus();
  };
  return (
    // biome-ignore lint/a11y/noStaticElementInteractions: Escape closes the menu from any of its buttons.
    <div
      className="org-switcher"
      ref={box}
      onKeyDown={(e) => {
        if (e.key === "Escape" && open) {
          e.stopPropagation();
          close();
        }
      }}
    >
      <p className="org-name" role="note" aria-label="Organization">
        {session.organizationName}
      </p>
      <button
        ref={toggle}
        type="button"
        className="org-toggle"
        aria-expanded={open}
        aria-controls="org-menu"
        onClick={() => setOpen(!open)}
      >
        <span className="visually-hidden">{several ? "Switch organization" : "Organization options"}</span>
        <span aria-hidden="true">▾</span>
      </button>
      {open && (
        <div id="org-menu" className="org-menu">
          <ErrorBox error={error} />
          {several && (
            <ul>
              {mine.map(({ organization, membership }) => {
                const current = organization.id === session.organizationId;
                return (
                  <li key={organization.id}>
                    <button
                      type="button"
                      aria-current={current ? "true" : undefined}
                      onClick={() => {
                        setOpen(false);
                        if (current) return;
                        onSwitch(organization.id).catch((e: unknown) => {
                          setError(errorOf(e));
                          setOpen(true);
                        });
                      }}
                    >
                      <span className="org-option">{organization.name}</span>{" "}
                      <span className="org-role">{membership.role}</span>
                    </button>
                  </li>
                );
              })}
            </ul>
          )}
          <button
            type="button"
            className="org-create"
            onClick={() => {
              setOpen(false);
              navigate("/onboarding");
            }}
          >
            Create organization
          </button>
        </div>
      )}
    </div>
  );
}
