import type { Kiln, Label, Prompt, PromptVersion } from "@kiln/sdk";
import { useEffect, useState } from "react";
import { errorOf, type Session, type ShownError } from "./api.js";
import { useAuthorNames } from "./authors.js";
import { playgroundLink } from "./playground-link.js";
import { IncludesLine, useIncludedPrompts } from "./prompt-includes.js";
import type { Navigate } from "./router.js";
import { DataTable, Empty, ErrorBox, Link } from "./ui.js";

const SHOWN = 10;

/** A date and time as people read it: "27 Nov 2026, 03:41". */
export const when = (iso: string) =>
  new Date(iso).toLocaleString("en-GB", {
    day: "numeric",
    month: "short",
    year: "numeric",
    hour: "2-digit",
    minute: "2-digit",
  });

const excerpt = (text: string, length = 120) => (text.length > length ? `${text.slice(0, length - 1)}…` : text);

/**
 * The prompt's versions, newest first: what each holds (the system prompt's start, the model), its
 * change message, who made it and when, the prompts it includes (links), the labels on it and its
 * status; a draft can be published (through `onPublish`, which asks first). Versions are immutable:
 * each is read once.
 */
export function VersionsTable({
  kiln,
  session,
  prompt,
  labels,
  navigate,
  onPublish,
}: {
  kiln: Kiln;
  session: Session;
  prompt: Prompt;
  labels: Label[];
  navigate: Navigate;
  onPublish: (version: { id: string; version: number }) => void;
}) {
  const authorName = useAuthorNames(session);
  const [all, setAll] = useState(false);
  const [read, setRead] = useState<Record<string, PromptVersion>>({});
  const [error, setError] = useState<ShownError | null>(null);
  const newest = [...prompt.versions].reverse();
  const shown = all ? newest : newest.slice(0, SHOWN);
  const missing = shown.filter((v) => !read[v.id]).map((v) => v.id);
  const missingKey = missing.join(",");
  useEffect(() => {
    if (missingKey === "") return;
    Promise.all(missingKey.split(",").map((versionId) => kiln.prompts.get(prompt.id, { versionId }))).then(
      (answers) =>
        setRead((r) => {
          const next = { ...r };
          for (const a of answers) if (a.version) next[a.version.id] = a.version;
          return next;
        }),
      (e: unknown) => setError(errorOf(e)),
    );
  }, [kiln, prompt.id, missingKey]);
  const included = shown.flatMap((v) => read[v.id]?.includes.map((i) => i.name) ?? []);
  const includedIds = useIncludedPrompts(kiln, prompt.organizationId, included);
  if (newest.length === 0) return <Empty>No version yet: write the first one below.</Empty>;
  return (
    <>
      <ErrorBox error={error} />
      <DataTable label="Versions table" columns={["Version", "Content", "Created", "Labels", "Status", "Action"]}>
        {shown.map((v) => {
          const content = read[v.id];
          const live = v.id === prompt.publishedVersionId;
          return (
            <tr key={v.id} className={live ? "live" : undefined}>
              <td>{v.version}</td>
              <td className="content">
                {v.message && <span className="change-message">{v.message}</span>}
                {content ? (
                  <>
                    <span className="excerpt">
                      {excerpt(content.messages.find((m) => m.role !== "placeholder")?.content ?? "") ||
                        "(no system prompt)"}
                    </span>
                    <span className="hint">
                      {content.model ?? "default model"}
                      {content.tools.length > 0 ? ` · tools: ${content.tools.map((t) => t.toolKey).join(", ")}` : ""}
                      {content.responseFormat.type === "json_schema" ? " · JSON answer" : ""}
                    </span>
                    <IncludesLine includes={content.includes} ids={includedIds} navigate={navigate} />
                  </>
                ) : (
                  "…"
                )}
              </td>
              <td>
                <span className="nowrap">{when(v.createdAt)}</span>
                <span className="hint">by {authorName(v.createdBy)}</span>
              </td>
              <td>
                {labels
                  .filter((l) => l.versionId === v.id)
                  .map((l) => (
                    <span key={l.label} className={`chip${l.label === "production" ? " production" : ""}`}>
                      {l.label}
                    </span>
                  ))}
              </td>
              <td>{live ? "published (live)" : v.status}</td>
              <td>
                <div className="version-actions">
                  {v.status === "draft" && (
                    <button type="button" className="secondary" onClick={() => onPublish(v)}>
                      Publish version {v.version}
                    </button>
                  )}
                  <Link to={playgroundLink("prompt", prompt.id, v.id)} navigate={navigate}>
                    Try version {v.version} in the playground
                  </Link>
                </div>
              </td>
            </tr>
          );
        })}
      </DataTable>
      {newest.length > SHOWN && (
        <button type="button" className="secondary" onClick={() => setAll(!all)}>
          {all ? `Show the newest ${SHOWN}` : `Show all ${newest.length} versions`}
        </button>
      )}
    </>
  );
}
