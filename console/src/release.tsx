import type { Kiln, Label, Prompt, PromptVersion } from "@kiln/sdk";
import { useCallback, useRef, useState } from "react";
import { useLoaded } from "./action.js";
import type { ShownError } from "./api.js";
import { useConfirmFocus } from "./confirm.js";
import { documentDiff, versionDocument } from "./prompt-draft.js";
import { ErrorBox, Loading } from "./ui.js";
import { DiffTable } from "./versioned.js";

/** A release asked for: publishing a version (label null, or production), or moving a protected label. */
export interface Release {
  label: string | null;
  versionId: string;
  version: number;
}

/** Whether a move needs confirming: publishing does, and so does moving a protected label. */
export const isDeliberate = (label: string, labels: Label[]) =>
  label === "production" || labels.some((l) => l.label === label && l.protected);

/**
 * A modal that says what a release changes before it happens: the version it replaces (the diff
 * between the two) and who runs it from then on; it confirms or cancels.
 */
export function ConfirmRelease({
  kiln,
  prompt,
  labels,
  release,
  error,
  busy,
  onConfirm,
  onCancel,
}: {
  kiln: Kiln;
  prompt: Prompt;
  labels: Label[];
  release: Release;
  error: ShownError | null;
  busy: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const cancel = useRef<HTMLButtonElement>(null);
  // Shown once the button that asked is noted; Cancel, not the confirming button, has the focus.
  const show = useCallback(() => dialog.current?.showModal(), []);
  useConfirmFocus(true, cancel, show);
  const publishing = release.label === null || release.label === "production";
  const currentId = publishing
    ? prompt.publishedVersionId
    : (labels.find((l) => l.label === release.label)?.versionId ?? null);
  const current = prompt.versions.find((v) => v.id === currentId);
  const [loadError, setLoadError] = useState<ShownError | null>(null);
  const read = useCallback(async () => {
    const get = async (versionId: string) => (await kiln.prompts.get(prompt.id, { versionId })).version;
    const [from, to] = await Promise.all([currentId ? get(currentId) : null, get(release.versionId)]);
    return { from, to };
  }, [kiln, prompt.id, currentId, release.versionId]);
  const pair = useLoaded<{ from: PromptVersion | null; to: PromptVersion | null }>(read, setLoadError).value;
  const v = release.version;
  const title = publishing ? `Publish version ${v}?` : `Move ${release.label} to version ${v}?`;
  return (
    <dialog ref={dialog} aria-labelledby="release-title" onCancel={onCancel} className="release">
      <h2 id="release-title">{title}</h2>
      <p>
        {publishing
          ? `Version ${v} goes live: runs that name no version or label, and every caller of production, run it from now on.`
          : `${release.label} is protected: every caller of ${release.label} runs version ${v} from now on.`}{" "}
        {current
          ? `${publishing ? "Live now" : `${release.label} now points at`}: version ${current.version}.`
          : publishing
            ? "Nothing is live yet."
            : `${release.label} points at no version yet.`}
      </p>
      {current?.id === release.versionId && <p>It already points there: nothing changes.</p>}
      <h3>{current ? `What changes from version ${current.version} to ${v}` : `Version ${v}`}</h3>
      {pair?.to ? (
        <DiffTable
          label="What the release changes"
          changes={documentDiff(pair.from && versionDocument(pair.from), versionDocument(pair.to))}
        />
      ) : (
        !loadError && <Loading what="the versions" />
      )}
      <ErrorBox error={error ?? loadError} />
      <div className="actions">
        <button type="button" onClick={onConfirm} disabled={busy}>
          {publishing && release.label === null ? `Go live with version ${v}` : `Move ${release.label} to version ${v}`}
        </button>
        <button ref={cancel} type="button" className="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </dialog>
  );
}
