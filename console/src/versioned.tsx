import type { Kiln, VersionDiff } from "@kiln/sdk";
import { useState } from "react";
import type { Act } from "./action.js";
import { errorOf, type ShownError } from "./api.js";
import { ActButton, DataTable, Empty, ErrorBox, SelectField } from "./ui.js";
import { TextChangeCells } from "./word-diff.js";

/** How a family shows a version against the one before it: its noun and its client's diff call. */
export interface DiffFamily {
  noun: string;
  diff: (kiln: Kiln, id: string, versionId: string) => Promise<VersionDiff>;
}

/** A versioned resource as the diff panel needs it: its id and its numbered versions. */
export interface Versioned {
  id: string;
  versions: { id: string; version: number }[];
}

/** A select of versions, each shown as "Version 3" (or as `describe` says). */
export function VersionPicker<V extends { id: string; version: number }>({
  versions,
  describe = (v) => `Version ${v.version}`,
  ...select
}: {
  id: string;
  label: string;
  value: string;
  onChange: (versionId: string) => void;
  versions: V[];
  describe?: (version: V) => string;
}) {
  return (
    <SelectField {...select}>
      {versions.map((v) => (
        <option key={v.id} value={v.id}>
          {describe(v)}
        </option>
      ))}
    </SelectField>
  );
}

/** A version of the resource against the one before it (nothing while it has a single version). */
export function VersionDiffPanel({ family, kiln, resource }: { family: DiffFamily; kiln: Kiln; resource: Versioned }) {
  const later = resource.versions.filter((v) => v.version > 1);
  const [picked, setVersionId] = useState("");
  // The newest version until one is picked (versions appear after this mounted).
  const versionId = picked || later.at(-1)?.id || "";
  const [diff, setDiff] = useState<VersionDiff | null>(null);
  const [error, setError] = useState<ShownError | null>(null);
  if (later.length === 0) return null;
  const { noun } = family;
  const capital = noun.charAt(0).toUpperCase() + noun.slice(1);
  return (
    <section className="card" aria-labelledby={`${noun}-diff`}>
      <h2 id={`${noun}-diff`}>Version diff</h2>
      <VersionPicker
        id={`${noun}-diff-version`}
        label="Version (against the one before)"
        value={versionId}
        onChange={setVersionId}
        versions={later}
      />
      <button
        type="button"
        onClick={() =>
          family
            .diff(kiln, resource.id, versionId)
            .then(setDiff)
            .catch((e) => setError(errorOf(e)))
        }
      >
        Show diff
      </button>
      <ErrorBox error={error} />
      {diff && <DiffTable label={`${capital} version diff`} changes={diff.changes} />}
    </section>
  );
}

/** A draftable resource's heading: its name, whether its draft is being edited and a version published, the page's error. */
export function DraftHeading({
  resource,
  noDraft,
  error,
}: {
  resource: { name: string; draftVersionId?: string | null; publishedVersionId: string | null };
  noDraft: string;
  error: ShownError | null;
}) {
  return (
    <>
      <h1>{resource.name}</h1>
      <p>
        {resource.draftVersionId ? "Editing the draft." : noDraft}{" "}
        {resource.publishedVersionId ? "A version is published." : "Nothing published yet."}
      </p>
      <ErrorBox error={error} />
    </>
  );
}

/** Opens a new draft version (shown while there is none), then reloads the resource. */
export function NewVersionButton({
  act,
  create,
  reload,
}: {
  act: Act;
  create: () => Promise<unknown>;
  reload: () => void;
}) {
  const run = async () => {
    await create();
    reload();
  };
  return (
    <ActButton act={act} run={run} className="secondary">
      New version
    </ActButton>
  );
}

export interface DiffChange {
  op: "add" | "remove" | "replace";
  path: string;
  before?: unknown;
  after?: unknown;
}

const CHANGED: Record<DiffChange["op"], string> = { add: "added", remove: "removed", replace: "changed" };

/** A value of a diff as people read it: text as it is, anything else as JSON. */
const shown = (v: unknown) => (v === undefined ? "" : typeof v === "string" ? v : JSON.stringify(v, null, 2));

/**
 * A version diff (the API's JSON Patch-like changes): what changed, where, from what to what; a
 * text changed in place shows its words removed and added (word-diff.tsx).
 */
export function DiffTable({ label, changes }: { label: string; changes: DiffChange[] }) {
  if (changes.length === 0) return <Empty>No change.</Empty>;
  return (
    <DataTable label={label} columns={["Change", "Where", "Before", "After"]}>
      {changes.map((c) => (
        <tr key={`${c.op}${c.path}`} className="changed">
          <td className="nowrap">{CHANGED[c.op]}</td>
          <td>
            <code>{c.path}</code>
          </td>
          {c.op === "replace" && typeof c.before === "string" && typeof c.after === "string" ? (
            <TextChangeCells before={c.before} after={c.after} />
          ) : (
            <>
              <td>
                <pre className="output">{shown(c.before)}</pre>
              </td>
              <td>
                <pre className="output">{shown(c.after)}</pre>
              </td>
            </>
          )}
        </tr>
      ))}
    </DataTable>
  );
}
