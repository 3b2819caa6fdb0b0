import { type ReactNode, type RefObject, useEffect, useRef, useState } from "react";
import type { Act } from "./action.js";

/**
 * Focus for a confirmation (WAI-ARIA APG "Alert and Message Dialogs"): while it is open the least
 * destructive action (Cancel) has the focus, so Enter never confirms by accident; once it closes
 * the focus goes back to what opened it, never to the page's body.
 */
export function useConfirmFocus(
  open: boolean,
  cancel: RefObject<HTMLButtonElement | null>,
  /** Shows the confirmation when it is a native modal dialog (after the opener is noted). */
  show?: () => void,
) {
  useEffect(() => {
    if (!open) return;
    const opener = document.activeElement;
    show?.();
    cancel.current?.focus();
    return () => {
      if (opener instanceof HTMLElement && opener.isConnected) opener.focus();
    };
  }, [open, cancel, show]);
}

/**
 * A button whose action is asked for first: an inline alert dialog with the question, the
 * confirming button and Cancel (Escape cancels too). For releases and revocations.
 */
export function ConfirmButton({
  act,
  run,
  children,
  question,
  confirmLabel,
  danger = false,
  className,
}: {
  act: Act;
  run: () => Promise<unknown>;
  /** The button that opens the question. */
  children: ReactNode;
  question: ReactNode;
  confirmLabel: string;
  danger?: boolean;
  className?: string;
}) {
  const [open, setOpen] = useState(false);
  const cancel = useRef<HTMLButtonElement>(null);
  const id = useRef(`confirm-${Math.random().toString(36).slice(2)}`).current;
  useConfirmFocus(open, cancel);
  return (
    <>
      <button type="button" className={className} onClick={() => setOpen(true)} aria-expanded={open}>
        {children}
      </button>
      {open && (
        <div
          role="alertdialog"
          aria-labelledby={id}
          className="confirm"
          onKeyDown={(e) => {
            if (e.key === "Escape") setOpen(false);
          }}
        >
          <p id={id}>{question}</p>
          <div className="actions">
            <button
              type="button"
              className={danger ? "danger" : undefined}
              onClick={() =>
                act(async () => {
                  await run();
                  setOpen(false);
                })
              }
            >
              {confirmLabel}
            </button>
            <button ref={cancel} type="button" className="secondary" onClick={() => setOpen(false)}>
              Cancel
            </button>
          </div>
        </div>
      )}
    </>
  );
}
