import { type ReactNode, useId, useState } from "react";
import type { Act } from "./action.js";
import type { ShownError } from "./api.js";

/**
 * The API's error envelope, shown where a person reads it: the message, and the issues of the
 * fields it names, except those of `shownFields`, which the form shows next to their inputs (an
 * issue is shown once).
 */
export function ErrorBox({ error, shownFields = [] }: { error: ShownError | null; shownFields?: string[] }) {
  if (!error) return null;
  const fields = Object.entries(error.fields).filter(([field]) => !shownFields.includes(field));
  return (
    <div role="alert" className="error">
      <strong>{error.message}</strong>
      {fields.length > 0 && (
        <ul>
          {fields.map(([field, issue]) => (
            <li key={field}>
              <code>{field}</code> {issue}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** A labelled input with the issue the API gave for its field next to it. */
export function Field(props: {
  label: string;
  value: string;
  onChange: (value: string) => void;
  type?: string;
  issue?: string;
  multiline?: boolean;
  rows?: number;
  required?: boolean;
  autoComplete?: string;
  /** The id of a <datalist> of suggestions. */
  list?: string;
  /** What an empty field stands for. */
  placeholder?: string;
}) {
  const id = useId();
  const issueId = `${id}-issue`;
  const common = {
    id,
    value: props.value,
    placeholder: props.placeholder,
    required: props.required,
    "aria-invalid": props.issue ? true : undefined,
    "aria-describedby": props.issue ? issueId : undefined,
  };
  return (
    <div className="field">
      <label htmlFor={id}>{props.label}</label>
      {props.multiline ? (
        <textarea {...common} rows={props.rows ?? 4} onChange={(e) => props.onChange(e.target.value)} />
      ) : (
        <input
          {...common}
          type={props.type ?? "text"}
          autoComplete={props.autoComplete}
          list={props.list}
          onChange={(e) => props.onChange(e.target.value)}
        />
      )}
      {props.issue && (
        <span id={issueId} className="issue">
          {props.issue}
        </span>
      )}
    </div>
  );
}

/** A button that runs `run` through `act`: the page shows what the API said if it fails. */
export function ActButton({
  act,
  run,
  children,
  ...button
}: {
  act: Act;
  run: () => Promise<unknown>;
  children: ReactNode;
  className?: string;
  disabled?: boolean;
  "aria-label"?: string;
}) {
  return (
    <button
      type="button"
      {...button}
      onClick={() =>
        act(async () => {
          await run();
        })
      }
    >
      {children}
    </button>
  );
}

/** A labelled select; the options are the children. */
export function SelectField({
  id,
  label,
  value,
  onChange,
  children,
}: {
  id: string;
  label: string;
  value: string;
  onChange: (value: string) => void;
  children: ReactNode;
}) {
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} value={value} onChange={(e) => onChange(e.target.value)}>
        {children}
      </select>
    </div>
  );
}

/** Checkboxes that choose some of `values`: each adds or removes its value from `chosen`. */
export function CheckList<T extends string>({
  values,
  chosen,
  onChange,
  label,
  className = "check",
}: {
  values: T[];
  chosen: T[];
  onChange: (chosen: T[]) => void;
  label: (value: T) => ReactNode;
  className?: string;
}) {
  return values.map((v) => (
    <label key={v} className={className}>
      <input
        type="checkbox"
        checked={chosen.includes(v)}
        onChange={(e) => onChange(e.target.checked ? [...chosen, v] : chosen.filter((x) => x !== v))}
      />{" "}
      {label(v)}
    </label>
  ));
}

/** What a page shows until its resource is loaded: the API's error, else that it is loading. */
export function Pending({ error, what }: { error: ShownError | null; what: string }) {
  return <main>{error ? <ErrorBox error={error} /> : <Loading what={what} />}</main>;
}

export function Loading({ what }: { what: string }) {
  return (
    <p role="status" aria-live="polite">
      Loading {what}…
    </p>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return <p className="empty">{children}</p>;
}

/** A table that scrolls sideways on a narrow screen, reachable by keyboard. */
export function TableWrap({ label, children }: { label: string; children: ReactNode }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must take focus (WCAG 2.1.1)
    <section className="table-wrap" tabIndex={0} aria-label={label}>
      {children}
    </section>
  );
}

/** A table with a header row of columns, scrolling sideways on a narrow screen; the rows are the children. */
export function DataTable({ label, columns, children }: { label: string; columns: string[]; children: ReactNode }) {
  return (
    <TableWrap label={label}>
      <table>
        <thead>
          <tr>
            {columns.map((column) => (
              <th key={column} scope="col">
                {column}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </TableWrap>
  );
}

/** The cells every step row starts with: the step, its status, and its output or error. */
export function StepCells({
  step,
}: {
  step: { stepId: string; status: string; output?: { text?: string } | null; error?: { message: string } | null };
}) {
  return (
    <>
      <td>{step.stepId}</td>
      <td>{step.status}</td>
      <td>
        <pre className="output">{step.output?.text ?? step.error?.message ?? ""}</pre>
      </td>
    </>
  );
}

/** Tools to attach, as checkboxes (each pins the tool's current version). */
export function ToolPicker({
  tools,
  chosen,
  onChange,
  legend,
}: {
  tools: { id: string; toolKey: string; name: string }[];
  chosen: string[];
  onChange: (ids: string[]) => void;
  legend: string;
}) {
  if (tools.length === 0) return null;
  const keyOf = new Map(tools.map((t) => [t.id, t.toolKey]));
  return (
    <fieldset>
      <legend>{legend}</legend>
      <CheckList values={tools.map((t) => t.id)} chosen={chosen} onChange={onChange} label={(id) => keyOf.get(id)} />
    </fieldset>
  );
}

/** A link inside the console: the browser's own link (new tab, copy), navigated without a reload. */
export function Link({
  to,
  navigate,
  children,
  current,
}: {
  to: string;
  navigate: (path: string) => void;
  children: ReactNode;
  current?: boolean;
}) {
  return (
    <a
      href={to}
      aria-current={current ? "page" : undefined}
      onClick={(e) => {
        if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
        e.preventDefault();
        navigate(to);
      }}
    >
      {children}
    </a>
  );
}

/* runs and playground */

/** A run's status, coloured: a failure stands out in a list. */
export function StatusBadge({ status }: { status: string }) {
  return <span className={`badge status-${status}`}>{status}</span>;
}

/** Copies `text`, saying so (or why not) in a live region; keyed by the text, so a change clears what it said. */
export function CopyButton({ text, what }: { text: string; what: string }) {
  const [said, setSaid] = useState("");
  const copy = () => {
    navigator.clipboard.writeText(text).then(
      () => setSaid(`Copied the ${what}.`),
      () => setSaid("The browser refused the clipboard: select the text and copy it."),
    );
  };
  return (
    <div className="copy-row">
      <button type="button" onClick={copy}>
        Copy {what}
      </button>
      <span role="status">{said}</span>
    </div>
  );
}
