import { type KeyboardEvent, type ReactNode, useCallback, useEffect, useRef, useState } from "react";
import { useLoaded } from "./action.js";
import { call, type Session } from "./api.js";
import { Nav } from "./nav.js";
import { OrganizationSwitcher } from "./org-switcher.js";
import type { Navigate } from "./router.js";

/** Below this width the sidebar is a drawer the Menu button opens (styles.css "Shell"). */
const NARROW = "(max-width: 1023.98px)";

function useNarrow(): boolean {
  const [narrow, setNarrow] = useState(() => matchMedia(NARROW).matches);
  useEffect(() => {
    const query = matchMedia(NARROW);
    const changed = () => setNarrow(query.matches);
    query.addEventListener("change", changed);
    return () => query.removeEventListener("change", changed);
  }, []);
  return narrow;
}

const FOCUSABLE = "a[href], button:not([disabled]), input, select, textarea";

/** Tab and Shift+Tab go round the drawer's own controls, never behind it. */
function trapTab(e: KeyboardEvent, container: HTMLElement | null) {
  const items = [...(container?.querySelectorAll<HTMLElement>(FOCUSABLE) ?? [])].filter((el) => el.offsetParent);
  const first = items[0];
  const last = items.at(-1);
  if (!first || !last) return;
  if (e.shiftKey && document.activeElement === first) {
    e.preventDefault();
    last.focus();
  } else if (!e.shiftKey && document.activeElement === last) {
    e.preventDefault();
    first.focus();
  }
}

/** Who is signed in (`GET /api/me`) and Sign out, at the foot of the sidebar. */
function UserMenu({ onSignOut }: { onSignOut: () => void }) {
  const read = useCallback(() => call<{ email: string; fullName: string }>("GET", "/api/me"), []);
  const { value: me } = useLoaded(read, () => undefined);
  return (
    <div className="user-menu">
      {me && (
        <p>
          <span className="user-name">{me.fullName || me.email}</span>
          {me.fullName && (
            <span className="user-email" title={me.email}>
              {me.email}
            </span>
          )}
        </p>
      )}
      <button type="button" className="link" onClick={onSignOut}>
        Sign out
      </button>
    </div>
  );
}

/**
 * The signed-in console's frame: a sidebar (the organization switcher, the grouped navigation,
 * the user menu) beside the page; on a narrow screen a top bar whose Menu button opens the same
 * sidebar as a modal drawer (focus kept inside, Escape closes, the page behind inert).
 */
export function ShellFrame({
  session,
  path,
  navigate,
  onSwitch,
  onSignOut,
  children,
}: {
  session: Session;
  path: string;
  navigate: Navigate;
  onSwitch: (organizationId: string) => Promise<void>;
  onSignOut: () => void;
  children: ReactNode;
}) {
  const narrow = useNarrow();
  const [open, setOpen] = useState(false);
  const drawer = useRef<HTMLElement>(null);
  const menu = useRef<HTMLButtonElement>(null);
  const modal = narrow && open;

  // A new page (a link, the back button): the drawer is put away. (A window widened and narrowed
  // again keeps it: the wide sidebar is the same element, shown in place.)
  // biome-ignore lint/correctness/useExhaustiveDependencies: the path is the trigger, not an input.
  useEffect(() => setOpen(false), [path]);
  // Closed by Escape, Close or a click beside it: focus goes back to the Menu button, once the
  // page behind is no longer inert.
  const refocus = useRef(false);
  useEffect(() => {
    if (modal) drawer.current?.querySelector<HTMLElement>(FOCUSABLE)?.focus();
    else if (refocus.current) menu.current?.focus();
    refocus.current = false;
  }, [modal]);

  const close = () => {
    refocus.current = true;
    setOpen(false);
  };
  const go: Navigate = (to) => {
    setOpen(false);
    navigate(to);
  };
  return (
    <div className="shell">
      {/* biome-ignore lint/a11y/useAriaPropsSupportedByRole: a dialog (aria-modal) only while it is the drawer. */}
      <aside
        id="sidebar"
        ref={drawer}
        className={open ? "sidebar open" : "sidebar"}
        role={modal ? "dialog" : undefined}
        aria-modal={modal || undefined}
        aria-label={modal ? "Menu" : undefined}
        onKeyDown={(e) => {
          if (!modal) return;
          if (e.key === "Escape") close();
          else if (e.key === "Tab") trapTab(e, drawer.current);
        }}
      >
        <div className="sidebar-head">
          <strong className="brand">Kiln</strong>
          {modal && (
            <button type="button" className="drawer-close" onClick={close}>
              Close
            </button>
          )}
          <OrganizationSwitcher
            key={session.organizationId}
            session={session}
            navigate={go}
            onSwitch={(id) => {
              setOpen(false);
              return onSwitch(id);
            }}
          />
        </div>
        <Nav path={path} navigate={go} />
        <UserMenu onSignOut={onSignOut} />
      </aside>
      {modal && <div className="drawer-backdrop" aria-hidden="true" onClick={close} />}
      <div className="shell-main" inert={modal}>
        <header className="topbar">
          <button
            ref={menu}
            type="button"
            className="menu-toggle"
            aria-expanded={open}
            aria-controls="sidebar"
            onClick={() => setOpen(true)}
          >
            Menu
          </button>
          <strong className="brand">Kiln</strong>
          <span className="topbar-org">{session.organizationName}</span>
        </header>
        {children}
      </div>
    </div>
  );
}
