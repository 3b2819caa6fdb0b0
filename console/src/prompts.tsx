import type { Label } from "@kiln/sdk";
import { useCallback, useState } from "react";
import { useAction, useLoaded } from "./action.js";
import { PromptEvaluations } from "./prompt-evaluations.js";
import { CompareVersions, Labels } from "./prompt-extras.js";
import { FolderCrumbs, folderOfName } from "./prompt-folders.js";
import { VersionsTable } from "./prompt-versions.js";
import { ConfirmRelease, type Release } from "./release.js";
import type { PageProps } from "./router.js";
import { ErrorBox, Pending } from "./ui.js";
import { VersionEditor } from "./version-editor.js";

/** One prompt: its versions, a version editor, labels and releases (each asked for first), a comparison. */
export function PromptDetail({ kiln, session, navigate, id }: PageProps & { id: string }) {
  const { error, setError, act, busy } = useAction();
  // One message at a time: each action replaces the one before.
  const [notice, setNotice] = useState("");
  const [release, setRelease] = useState<Release | null>(null);
  const read = useCallback(() => kiln.prompts.get(id), [kiln, id]);
  const { value: prompt, reload } = useLoaded(read, setError);
  const readLabels = useCallback(() => kiln.prompts.labels.list(id), [kiln, id]);
  const { value: labels, reload: reloadLabels } = useLoaded<Label[]>(readLabels, setError);
  const changed = (message: string) => {
    setNotice(message);
    reload();
    reloadLabels();
  };
  const confirm = () =>
    act(async () => {
      if (!prompt || !release) return;
      if (release.label === null) await kiln.prompts.publish(id, { versionId: release.versionId });
      else await kiln.prompts.labels.set(id, release.label, release.versionId);
      setRelease(null);
      changed(
        release.label === null || release.label === "production"
          ? `Version ${release.version} is live.`
          : `${release.label} now points at version ${release.version}.`,
      );
    });
  if (!prompt) return <Pending error={error} what="the prompt" />;
  const folder = folderOfName(prompt.name);
  return (
    <main>
      {folder !== "" && <FolderCrumbs folder={folder} navigate={navigate} current={false} />}
      <h1>{prompt.name}</h1>
      <p role="status">{notice}</p>
      {!release && <ErrorBox error={error} />}
      <section className="card" aria-labelledby="versions">
        <h2 id="versions">Versions</h2>
        <VersionsTable
          kiln={kiln}
          session={session}
          prompt={prompt}
          labels={labels ?? []}
          navigate={navigate}
          onPublish={(v) => {
            setNotice("");
            setRelease({ label: null, versionId: v.id, version: v.version });
          }}
        />
      </section>
      <VersionEditor
        key={prompt.latestVersion}
        kiln={kiln}
        prompt={prompt}
        onCreated={(v) => changed(`Version ${v.version} created as a draft.`)}
      />
      <Labels
        key={`labels-${prompt.latestVersion}`}
        kiln={kiln}
        prompt={prompt}
        labels={labels ?? []}
        onRelease={(r) => {
          setNotice("");
          setRelease(r);
        }}
        onMoved={(l) => changed(`${l.label} now points at version ${l.version}.`)}
      />
      <CompareVersions key={`compare-${prompt.latestVersion}`} kiln={kiln} prompt={prompt} />
      <PromptEvaluations kiln={kiln} session={session} navigate={navigate} prompt={prompt} />
      {release && (
        <ConfirmRelease
          kiln={kiln}
          prompt={prompt}
          labels={labels ?? []}
          release={release}
          error={error}
          busy={busy}
          onConfirm={confirm}
          onCancel={() => {
            setError(null);
            setRelease(null);
          }}
        />
      )}
    </main>
  );
}
