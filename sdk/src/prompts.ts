import type { ListQuery, PaginatedList } from "./paginated-list.js";
import { checkSelector, isUnreachable, PromptResolver } from "./prompt-resolution.js";
import { ResolvedPrompt, type ResolvePromptOptions } from "./resolved-prompt.js";
import type {
  CreatePromptVersionRequest,
  PromptFolder,
  PromptRunStreamEvent,
  Query,
  RequestBody,
  VersionDiff,
} from "./resources.js";
import { SwrCache } from "./swr-cache.js";
import type { CallInit, RequestOptions, Transport } from "./transport.js";
import { type BodyArgs, type FamilyOf, LabelledResource } from "./versioned-resource.js";

type PromptFamily = FamilyOf<
  "Prompt",
  {
    createVersionArgs: BodyArgs<CreatePromptVersionRequest>;
    publishArgs: BodyArgs<RequestBody<"publishPromptVersion">>;
  }
>;

/** As Langfuse's and LangSmith's prompt caches: a minute. */
const DEFAULT_CACHE_TTL_MS = 60_000;
/** The list's largest page: a name is looked up in as few requests as the route allows. */
const NAME_LOOKUP_PAGE = 200;

type Compile = ConstructorParameters<typeof ResolvedPrompt>[1];

/** ajv and Mustache, loaded by the first resolve (importing the SDK does not load them). */
let rendering: Promise<Compile> | undefined;
function loadRendering(): Promise<Compile> {
  rendering ??= import("./prompt-render.js").then(
    (m): Compile => m.compileTemplates,
    (e: unknown) => {
      rendering = undefined;
      throw e;
    },
  );
  return rendering;
}

/** The caller's options for a background revalidation: its signal belongs to the call that has returned. */
const withoutSignal = (request: RequestOptions | undefined): RequestOptions | undefined => {
  if (!request) return request;
  const { signal: _signal, ...rest } = request;
  return rest;
};

/**
 * Prompts and their immutable versions (docs/api.md "Stability", public beta): `get` answers the
 * prompt with `version` the one `versionId` names (default: the published one, else the latest);
 * `createVersion` creates an immutable draft; `publish` publishes a draft version. `resolve` is
 * the prompt client (sdk/README.md, "Prompts for your own model calls"): a version by name or id and label, cached, to render.
 */
export class Prompts extends LabelledResource<PromptFamily> {
  readonly #cache = new SwrCache<ResolvedPrompt>();
  readonly #resolver: PromptResolver;

  constructor(t: Transport) {
    super(t, "prompts");
    this.#resolver = new PromptResolver({
      get: (id, versionId, options) => this.get(id, versionId === undefined ? {} : { versionId }, options),
      list: (organizationId, options) =>
        this.list({ ...(organizationId === undefined ? {} : { organizationId }), limit: NAME_LOOKUP_PAGE }, options),
      labels: (id, options) => this.labels.list(id, options),
    });
  }

  /**
   * The folders of the organization's prompts (docs/api.md "Folders"): those directly in `folder`
   * (default: the top level), every folder below it with `nested: "true"`, in path order, each with
   * its prompts counted. `list({ folder })` lists the prompts of one.
   */
  folders(query: ListQuery<Query<"listPromptFolders">> = {}, options?: RequestOptions): PaginatedList<PromptFolder> {
    const send = (init: CallInit, wire: Query<"listPromptFolders">) =>
      this.t.api.GET("/api/prompts/folders", { ...init, params: { query: wire } });
    return this.t.page(query, send, options);
  }

  /** The changes from `against` (default: the version before) to `versionId`: messages and settings. */
  diff(
    id: string,
    versionId: string,
    query: Query<"diffPromptVersions"> = {},
    options?: RequestOptions,
  ): Promise<VersionDiff> {
    return this.versionDiff(id, versionId, query, options);
  }

  /**
   * Runs the published version (or `versionId`, `label`) as `run` does and yields the answer as the
   * model writes it (`POST /api/prompts/{id}/run/stream`): `start` with the run's id, a `text`
   * event per piece, then `done` with the stored run (or `error` if the stream broke off). A
   * refused request throws its KilnError before any event. Aborting `options.signal` (or leaving
   * the loop) cancels the run: it is stored failed, error code `cancelled`, with the text so far.
   */
  stream(
    id: string,
    body: RequestBody<"streamPromptRun">,
    options?: RequestOptions,
  ): AsyncGenerator<PromptRunStreamEvent> {
    return this.t.stream<PromptRunStreamEvent>(`/api/prompts/${encodeURIComponent(id)}/run/stream`, body, options);
  }

  /**
   * A prompt version by the prompt's name or id (`prm_…`) and `label` (default `production`: the
   * published version), `version` or `versionId`, ready to `render(variables)`. Answers are kept
   * in memory for `cacheTtlMs` (default 60 000); an older answer is returned at once and revalidated
   * in the background; when Kiln cannot be reached, a cached answer (however old) is returned, else
   * `fallback` if given (`isFallback: true`), else the error is thrown. A 4xx (unknown name, label
   * or version; wrong key) is always thrown.
   */
  async resolve(
    nameOrId: string,
    options: ResolvePromptOptions = {},
    request?: RequestOptions,
  ): Promise<ResolvedPrompt> {
    const { cacheTtlMs = DEFAULT_CACHE_TTL_MS, fallback, ...selector } = options;
    checkSelector(selector);
    if (!(Number.isFinite(cacheTtlMs) && cacheTtlMs >= 0)) {
      throw new TypeError(`Kiln: cacheTtlMs must be a number ≥ 0, got ${cacheTtlMs}`);
    }
    // Before any request, so that a fallback renders when Kiln cannot be reached.
    const compile = await loadRendering();
    const load = async (previous: ResolvedPrompt | undefined, call: RequestOptions | undefined) => {
      const { prompt, version } = await this.#resolver.resolve(nameOrId, selector, call);
      // What it includes, as a run would render it now (api.md "Partials"): read only when it includes any.
      const partials =
        version.includes.length > 0
          ? await this.get(prompt.id, { versionId: version.id, partials: "true" }, call)
          : undefined;
      const fresh = new ResolvedPrompt({ prompt, version, ...(partials && { partials }) }, compile);
      // Unchanged (same version and includes, prompt not updated): the same object, its compiled templates kept.
      const same =
        previous?.versionId === version.id &&
        previous.prompt?.updatedAt === prompt.updatedAt &&
        JSON.stringify(previous.partialVersions) === JSON.stringify(fresh.partialVersions);
      return same ? previous : fresh;
    };
    try {
      if (cacheTtlMs === 0) return await load(undefined, request);
      const { label, version, versionId, organizationId } = selector;
      const key = JSON.stringify([
        organizationId,
        nameOrId,
        label ?? ((version ?? versionId) ? null : "production"),
        version,
        versionId,
      ]);
      const [value] = await this.#cache.get(key, cacheTtlMs, (previous) =>
        load(previous, previous ? withoutSignal(request) : request),
      );
      return value;
    } catch (e) {
      if (fallback && isUnreachable(e)) return new ResolvedPrompt({ fallback, cause: e }, compile);
      throw e;
    }
  }
}
