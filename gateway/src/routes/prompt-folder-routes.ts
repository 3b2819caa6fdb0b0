import { LIMITS } from "@kiln/kit/limits";
import type { PromptFolder } from "@kiln/proto/catalog";
import Type from "typebox";
import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { listPage, pageOf } from "../http/list-page.js";
import { listAnswers, operations } from "../http/operation.js";
import { rpcOptions } from "../http/request.js";
import { ListQuery, OneOf } from "../schemas.js";
import { organizationOf } from "./catalog-requests.js";

/**
 * Prompt folders (api.md "Folders"): the `/`-separated segments of prompt names. The list of
 * prompts filters by folder (`?folder=a/b`, `&nested=true` for every folder below it) and by
 * exact name; `GET /api/prompts/folders` lists the folders in one, with their prompts counted.
 */

/** One line without control characters, as names are (docs/api.md "Limits"). */
const ONE_LINE = "^[^\\u0000-\\u001f\\u007f]*$";

const Folder = Type.String({
  maxLength: LIMITS.nameChars,
  pattern: ONE_LINE,
  description: 'a folder: "a/b" (slashes at either end are ignored); "" or "/" is the top level',
});
const Nested = (description: string) => OneOf(["true", "false"], { description });

/** The query of `GET /api/prompts`: the list's, an exact name, a folder. */
export const PromptListQuerystring = Type.Object(
  {
    organizationId: Type.Optional(
      Type.String({ minLength: 1, maxLength: 100, description: "required unless the caller is an API key" }),
    ),
    ...ListQuery,
    name: Type.Optional(
      Type.String({ minLength: 1, maxLength: LIMITS.nameChars, pattern: ONE_LINE, description: "exactly this name" }),
    ),
    folder: Type.Optional(Folder),
    nested: Type.Optional(Nested("with folder: the prompts of every folder below it too")),
  },
  { additionalProperties: false },
);

/** The RPC fields of the prompt list's own filters. */
export const promptListFilters = (query: Record<string, string | undefined>) => ({
  name: query.name ?? "",
  ...(query.folder !== undefined && { folder: query.folder }),
  nested: query.nested === "true",
});

export const PromptFolderView = Type.Object(
  {
    path: Type.String({ description: '"a/b": the names of the prompts in it start with "a/b/"' }),
    name: Type.String({ description: 'its last segment: "b"' }),
    parent: Type.Union([Type.String(), Type.Null()], { description: 'the folder it is in: "a"; null: the top level' }),
    promptCount: Type.Integer({ description: "prompts directly in it" }),
    nestedPromptCount: Type.Integer({ description: "prompts in it and in every folder below it" }),
    folderCount: Type.Integer({ description: "folders directly in it" }),
  },
  { additionalProperties: false, $id: "PromptFolder" },
);

const promptFolderView = (f: PromptFolder) => ({
  path: f.path,
  name: f.name,
  parent: f.parent === "" ? null : f.parent,
  promptCount: f.promptCount,
  nestedPromptCount: f.nestedPromptCount,
  folderCount: f.folderCount,
});

export function registerPromptFolderRoutes(app: GatewayApp, deps: GatewayDeps): void {
  const { catalog } = deps.clients;
  app.get(
    "/api/prompts/folders",
    operations({ tags: ["prompts"], stability: "beta" })(
      "listPromptFolders",
      "The folders of an organization's prompts in ?folder= (default: the top level), in path order, with their prompts counted",
      {
        querystring: Type.Object(
          {
            organizationId: Type.Optional(
              Type.String({ minLength: 1, maxLength: 100, description: "required unless the caller is an API key" }),
            ),
            ...ListQuery,
            folder: Type.Optional(Folder),
            nested: Type.Optional(Nested("every folder below it, not only those directly in it")),
          },
          { additionalProperties: false },
        ),
        response: listAnswers(PromptFolderView, 400, 401, 403, 404),
      },
    ),
    async (request) => {
      const q = request.query;
      const r = await catalog.listPromptFolders(
        {
          organizationId: organizationOf(request, q.organizationId),
          folder: q.folder ?? "",
          nested: q.nested === "true",
          ...pageOf(q),
        },
        rpcOptions(request),
      );
      return listPage(r.folders, promptFolderView, r.nextCursor);
    },
  );
}
