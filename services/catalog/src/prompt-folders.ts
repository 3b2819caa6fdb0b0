/**
 * Prompt folders (api.md "Folders"): a prompt named `a/b/c` is the prompt `c` in the folder `b`
 * inside the folder `a`. Folders are not stored: they are the names' segments before their last
 * `/`, so they appear with their first prompt and go with their last one. A list filtered by a
 * folder is the indexed range of names under it; the folders below one are counted from the names
 * in that range.
 */
import { invalidArgument } from "@kiln/kit/errors";
import { pageOfSorted } from "@kiln/kit/pagination";
import type { Principal } from "@kiln/kit/principal";
import type { Filter } from "@kiln/kit/store";
import { SCOPES } from "./access.js";
import type { CatalogDeps } from "./catalog-deps.js";
import type { Issues } from "./domain/issues.js";

/** The folder a prompt name is in: its segments before the last `/` ("" for the top level). */
export function folderOf(name: string): string {
  const at = name.lastIndexOf("/");
  return at === -1 ? "" : name.slice(0, at);
}

/** A name's folders are its segments: none may be empty (no leading, trailing or double `/`). */
export function checkFolderSegments(issues: Issues, field: string, name: string): void {
  if (name.includes("/") && name.split("/").some((s) => s.trim() === "")) {
    issues.add(field, "has an empty folder segment: no leading, trailing or double /");
  }
}

/** A folder as a request gives it: `a/b`, `/a/b/` alike; "" or "/" is the top level. */
export function folderPathOf(folder: string, field = "folder"): string {
  const path = folder.replace(/^\/+|\/+$/g, "");
  if (path.split("/").some((s) => s.trim() === "") && path !== "") {
    throw invalidArgument("invalid folder", [{ field, issue: "has an empty segment (a double /)" }]);
  }
  return path;
}

const escapeRegex = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * The filter on `name` of the prompts in `folder` (with `nested`, in the folders below it too):
 * the range of names that start with `folder/` (the index organizationId, name, _id serves it),
 * and without `nested` none with a further `/`.
 */
export function folderFilter(folder: string, nested: boolean): Filter {
  if (folder === "") return nested ? {} : { name: { $regex: "^[^/]*$" } };
  const prefix = `${folder}/`;
  // "0" follows "/": every name that starts with the prefix sorts before `${folder}0`.
  const range = { $gte: prefix, $lt: `${folder}0` };
  return { name: nested ? range : { ...range, $regex: `^${escapeRegex(prefix)}[^/]*$` } };
}

/** One folder below the one listed, with what it holds. */
export interface PromptFolderView {
  path: string;
  name: string;
  parent: string;
  promptCount: number;
  nestedPromptCount: number;
  folderCount: number;
}

/** The folders below `folder` of these prompt names, counted, in path order. */
export function foldersOf(names: readonly string[], folder: string, nested: boolean): PromptFolderView[] {
  const found = new Map<string, PromptFolderView>();
  const entry = (path: string) => {
    let f = found.get(path);
    if (!f) {
      f = {
        path,
        name: path.slice(path.lastIndexOf("/") + 1),
        parent: folderOf(path),
        promptCount: 0,
        nestedPromptCount: 0,
        folderCount: 0,
      };
      found.set(path, f);
      const parent = found.get(f.parent);
      if (parent) parent.folderCount++;
    }
    return f;
  };
  const depth = folder === "" ? 0 : folder.split("/").length;
  for (const name of names) {
    const segments = folderOf(name).split("/");
    if (folderOf(name) === "" || segments.length <= depth) continue;
    if (depth > 0 && segments.slice(0, depth).join("/") !== folder) continue;
    // Outermost first, so a folder exists before the folders inside it are counted into it.
    for (let n = depth + 1; n <= segments.length; n++) {
      const f = entry(segments.slice(0, n).join("/"));
      f.nestedPromptCount++;
      if (n === segments.length) f.promptCount++;
    }
  }
  const list = [...found.values()].filter((f) => nested || f.parent === folder);
  return list.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

export function createPromptFolders(deps: CatalogDeps) {
  const c = deps.collections;
  return {
    /**
     * The folders directly in `folder` (with `nested`, every folder below it), a page at a time in
     * path order, each with its prompts counted.
     */
    async listPromptFolders(
      principal: Principal,
      input: { organizationId: string; folder: string; nested: boolean; limit: number; cursor: string },
    ): Promise<{ items: PromptFolderView[]; nextCursor: string }> {
      await deps.access.inOrganization(principal, input.organizationId, SCOPES.promptsRead);
      const folder = folderPathOf(input.folder);
      const filter = { organizationId: input.organizationId, ...folderFilter(folder, true) };
      const prompts = await c.prompts.find(filter, { projection: { _id: 1, name: 1 } });
      const folders = foldersOf(
        prompts.map((p) => p.name),
        folder,
        input.nested,
      );
      return pageOfSorted(folders, (f) => f.path, input);
    },
  };
}
