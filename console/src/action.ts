import { type FormEvent, useCallback, useEffect, useState } from "react";
import { errorOf, type ShownError } from "./api.js";

/** Runs an action, showing what the API said if it fails. */
export type Act = (what: () => Promise<void>) => Promise<void>;

/**
 * The error a page shows; `act`, which clears it, runs an action and keeps what the API said if it
 * fails; `submit`, the same as a form's submit handler; `busy` while an action runs; `edited`,
 * called when the user changes a field, drops that field's issue (and the error with the last).
 */
export function useAction(): {
  error: ShownError | null;
  setError: (error: ShownError | null) => void;
  edited: (field: string) => void;
  act: Act;
  submit: (what: () => Promise<void>) => (e: FormEvent) => void;
  busy: boolean;
} {
  const [error, setError] = useState<ShownError | null>(null);
  const [busy, setBusy] = useState(false);
  const act = useCallback<Act>(async (what) => {
    setError(null);
    setBusy(true);
    try {
      await what();
    } catch (err) {
      setError(errorOf(err));
    } finally {
      setBusy(false);
    }
  }, []);
  const submit = useCallback(
    (what: () => Promise<void>) => (e: FormEvent) => {
      e.preventDefault();
      void act(what);
    },
    [act],
  );
  const edited = useCallback((field: string) => {
    setError((e) => {
      if (!e || !(field in e.fields)) return e;
      const { [field]: _, ...fields } = e.fields;
      // An error that was only about fields goes once the last of them is edited.
      return Object.keys(fields).length === 0 ? null : { ...e, fields };
    });
  }, []);
  return { error, setError, edited, act, submit, busy };
}

/**
 * What `read` answers, read on mount and whenever `read` changes (a useCallback of the caller's),
 * and again on `reload`; a failure goes to `onError` as the API said it.
 */
export function useLoaded<T>(
  read: () => PromiseLike<T>,
  onError: (error: ShownError) => void,
): { value: T | null; setValue: (value: T | null) => void; reload: () => Promise<void> } {
  const [value, setValue] = useState<T | null>(null);
  // Resolves once the value is the one read again (or its error was told): what depends on the
  // list being current (a sentence saying what changed) waits for it.
  const reload = useCallback(
    () => Promise.resolve(read()).then(setValue, (e: unknown) => onError(errorOf(e))),
    [read, onError],
  );
  useEffect(() => {
    void reload();
  }, [reload]);
  return { value, setValue, reload };
}

/** What binds a `<Field>` to a form's value: the value, its setter and the API's issue for it. */
export interface FieldBinding {
  value: string;
  onChange: (value: string) => void;
  issue: string | undefined;
}

/**
 * The values of a form's text fields and `field(name)`, the props that bind one to a `<Field>`:
 * its value, its setter and the issue the API gave for it in `error`.
 */
export function useFields<K extends string>(initial: Record<K, string>, error: ShownError | null) {
  const [values, setValues] = useState(initial);
  const set = useCallback((name: K, value: string) => setValues((v) => ({ ...v, [name]: value })), []);
  const field = (name: K): FieldBinding => ({
    value: values[name],
    onChange: (value: string) => set(name, value),
    issue: error?.fields[name],
  });
  return { values, set, field };
}
