import type { Prompt, PromptFolder } from "@kiln/sdk";
import { useEffect, useState } from "react";
import { useAction } from "./action.js";
import { ListEnd, usePagedList } from "./paged-list.js";
import type { Navigate, PageProps } from "./router.js";
import { Empty, ErrorBox, Field, Link, Loading } from "./ui.js";

/**
 * Prompt folders (docs/api.md "Folders"): the prompts page of a folder (`/prompts` is the top
 * level, `/prompts/in/support/billing` a folder), its folders first as rows to open, then the
 * prompts directly in it, each read a page at a time; a breadcrumb back up; a new prompt named
 * inside the folder.
 */

const PAGE = 100;

/** The console path of a folder ("" is the top level): each segment encoded on its own. */
export const folderPath = (folder: string) =>
  folder === "" ? "/prompts" : `/prompts/in/${folder.split("/").map(encodeURIComponent).join("/")}`;

/** The folder a route's path names (`/prompts/in/a/b` → "a/b"). */
export const folderOfPath = (rest: string) => rest.split("/").map(decodeURIComponent).join("/");

/** The folder a prompt name is in: its segments before the last `/` ("" for the top level). */
export const folderOfName = (name: string) => (name.includes("/") ? name.slice(0, name.lastIndexOf("/")) : "");

const plural = (n: number, noun: string) => `${n} ${noun}${n === 1 ? "" : "s"}`;

/** Prompts › support › billing: each folder above the current one a link. */
export function FolderCrumbs({
  folder,
  navigate,
  current = true,
}: {
  folder: string;
  navigate: Navigate;
  /** Whether the last folder is the page itself (else it is a link too: a prompt's page). */
  current?: boolean;
}) {
  const segments = folder === "" ? [] : folder.split("/");
  return (
    <nav aria-label="Breadcrumb" className="crumbs">
      <ol className="breadcrumb">
        <li>
          {segments.length === 0 && current ? (
            <span aria-current="page">Prompts</span>
          ) : (
            <Link to="/prompts" navigate={navigate}>
              Prompts
            </Link>
          )}
        </li>
        {segments.map((segment, i) => {
          const path = segments.slice(0, i + 1).join("/");
          const last = i === segments.length - 1 && current;
          return (
            <li key={path}>
              {last ? (
                <span aria-current="page">{segment}</span>
              ) : (
                <Link to={folderPath(path)} navigate={navigate}>
                  {segment}
                </Link>
              )}
            </li>
          );
        })}
      </ol>
    </nav>
  );
}

/** The prompts page of `folder` ("" the top level): its folders, its prompts, a new prompt in it. */
export function PromptFolderPage({ kiln, session, navigate, folder }: PageProps & { folder: string }) {
  const organizationId = session.organizationId ?? "";
  const folders = usePagedList<PromptFolder>();
  const prompts = usePagedList<Prompt>();
  const { start: startFolders } = folders;
  const { start: startPrompts } = prompts;
  const [query, setQuery] = useState("");
  const [name, setName] = useState(folder === "" ? "" : `${folder}/`);
  const { error, submit } = useAction();
  useEffect(() => {
    startFolders(kiln.prompts.folders({ organizationId, folder, limit: PAGE }).pages());
    startPrompts(kiln.prompts.list({ organizationId, folder, limit: PAGE }).pages());
  }, [kiln, organizationId, folder, startFolders, startPrompts]);
  const create = submit(async () => {
    const created = await kiln.prompts.create({ organizationId, name });
    navigate(`/prompts/${created.id}`);
  });
  const matches = (text: string) => text.toLowerCase().includes(query.toLowerCase());
  const shownFolders = (folders.items ?? []).filter((f) => matches(f.name));
  const shownPrompts = (prompts.items ?? []).filter((p) => matches(p.name));
  const loaded = folders.items !== null && prompts.items !== null;
  const none = loaded && folders.items?.length === 0 && prompts.items?.length === 0;
  const leaf = folder.slice(folder.lastIndexOf("/") + 1);
  const listHeading = folder === "" ? "All prompts" : `In ${folder}`;
  return (
    <main>
      {folder !== "" && <FolderCrumbs folder={folder} navigate={navigate} />}
      <h1>{folder === "" ? "Prompts" : leaf}</h1>
      <div className="columns">
        <section className="card" aria-labelledby="new-prompt">
          <h2 id="new-prompt">New prompt</h2>
          <form onSubmit={create} noValidate>
            <Field label="Name" value={name} onChange={setName} issue={error?.fields.name} required />
            <p className="hint">A name with / puts the prompt in a folder: support/billing/refund.</p>
            <ErrorBox error={error && !error.fields.name ? error : null} />
            <button type="submit">Create prompt</button>
          </form>
        </section>
        <section aria-labelledby="all-prompts">
          <h2 id="all-prompts">{listHeading}</h2>
          <Field label="Search prompts" type="search" value={query} onChange={setQuery} />
          <ErrorBox error={folders.error ?? prompts.error} />
          {!loaded ? (
            <Loading what="prompts" />
          ) : none ? (
            <Empty>{folder === "" ? "No prompt yet: create the first one." : "This folder is empty."}</Empty>
          ) : shownFolders.length === 0 && shownPrompts.length === 0 ? (
            <Empty>No prompt matches.</Empty>
          ) : (
            <ul className="folder-list">
              {shownFolders.map((f) => (
                <li key={f.path} className="folder">
                  <span aria-hidden="true" className="folder-icon">
                    ▸
                  </span>
                  <Link to={folderPath(f.path)} navigate={navigate}>
                    {f.name}/
                  </Link>{" "}
                  <span>
                    folder: {plural(f.nestedPromptCount, "prompt")}
                    {f.folderCount > 0 ? `, ${plural(f.folderCount, "folder")}` : ""}
                  </span>
                </li>
              ))}
              {shownPrompts.map((p) => (
                <li key={p.id}>
                  {/* Aligned with the folders' names when there are folders above. */}
                  {shownFolders.length > 0 && <span aria-hidden="true" className="folder-icon" />}
                  <Link to={`/prompts/${p.id}`} navigate={navigate}>
                    {folder === "" ? p.name : p.name.slice(folder.length + 1)}
                  </Link>{" "}
                  <span>
                    {plural(p.latestVersion, "version")}
                    {p.publishedVersionId ? ", published" : ""}
                  </span>
                </li>
              ))}
            </ul>
          )}
          {folders.more && (
            <button type="button" className="secondary" onClick={() => void folders.next()} disabled={folders.loading}>
              {folders.loading ? "Loading…" : `Load ${PAGE} more folders`}
            </button>
          )}
          {prompts.more && <ListEnd list={prompts} noun="prompt" order="newest" pageSize={PAGE} />}
        </section>
      </div>
    </main>
  );
}
