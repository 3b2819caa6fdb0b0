/**
 * Which prompt version a name or id and a label, version number or version id stand for, through
 * the REST routes that exist: `GET /api/prompts/:id[?versionId=]` (the published version by
 * default, else the latest, with the list of every version), `GET /api/prompts/:id/labels`, and
 * for a name `GET /api/prompts` page by page (there is no lookup by name; a name found is
 * remembered as its id).
 */
import { KilnError, KilnTimeoutError } from "./kiln-error.js";
import type { Label, Prompt, PromptVersion } from "./resources.js";
import type { RequestOptions } from "./transport.js";

/** The routes resolution uses (Prompts gives its own methods; tests may give others). */
export interface PromptSource {
  get(id: string, versionId: string | undefined, options?: RequestOptions): Promise<Prompt>;
  list(organizationId: string | undefined, options?: RequestOptions): AsyncIterable<Prompt>;
  labels(id: string, options?: RequestOptions): Promise<Label[]>;
}

export interface VersionSelector {
  label?: string;
  version?: number;
  versionId?: string;
}

/** A prompt with the version the selector names. */
export interface Resolved {
  prompt: Prompt;
  version: PromptVersion;
}

const PROMPT_ID = /^prm_[0-9a-f]{32}$/;

/** An answer the SDK makes itself, shaped as the API's (status, code, message; no request id). */
const clientError = (status: 404 | 409, message: string) =>
  new KilnError(status, status === 404 ? "not_found" : "failed_precondition", message, [], undefined, undefined);

/** Refuses a selector that names a version more than one way. */
export function checkSelector(selector: VersionSelector): void {
  const given = (["label", "version", "versionId"] as const).filter((k) => selector[k] !== undefined);
  if (given.length > 1) throw new TypeError(`Kiln: give at most one of label, version and versionId, got ${given}`);
  const { version } = selector;
  if (version !== undefined && !(Number.isInteger(version) && version >= 1)) {
    throw new TypeError(`Kiln: version must be an integer ≥ 1, got ${version}`);
  }
}

/**
 * Whether `error` means Kiln could not answer (a fallback may stand in): a network failure
 * (fetch's TypeError), a timeout, a 429 or a 5xx after the transport's retries. Not a 4xx (a wrong
 * name, key or scope must not be hidden), not the caller's own abort.
 */
export function isUnreachable(error: unknown): boolean {
  if (error instanceof KilnTimeoutError) return true;
  if (error instanceof KilnError) return error.status === 429 || error.status >= 500;
  return error instanceof TypeError;
}

/** The version id the selector names, from the prompt as answered without `?versionId=`. */
function versionIdOf(head: Prompt, selector: VersionSelector): string {
  if (selector.version !== undefined) {
    const found = head.versions.find((v) => v.version === selector.version);
    if (!found) throw clientError(404, `prompt ${head.id} has no version ${selector.version}`);
    return found.id;
  }
  if (selector.label === "latest") {
    const latest = head.versions.at(-1);
    if (!latest) throw clientError(409, `prompt ${head.id} has no version`);
    return latest.id;
  }
  if (head.publishedVersionId === null) {
    throw clientError(409, `prompt ${head.id} has no published version: ask for a label such as "latest"`);
  }
  return head.publishedVersionId;
}

/** The prompt `id` with the version the selector names; `head` is the prompt as already answered, if at hand. */
export async function resolveById(
  source: PromptSource,
  id: string,
  selector: VersionSelector,
  options?: RequestOptions,
  head?: Prompt,
): Promise<Resolved> {
  let versionId = selector.versionId;
  const label = selector.label;
  if (label !== undefined && label !== "production" && label !== "latest") {
    const found = (await source.labels(id, options)).find((l) => l.label === label);
    if (!found) throw clientError(404, `prompt ${id} has no label "${label}"`);
    versionId = found.versionId;
  }
  let prompt = head;
  if (versionId === undefined) {
    prompt ??= await source.get(id, undefined, options);
    versionId = versionIdOf(prompt, selector);
  }
  if (prompt?.version?.id !== versionId) prompt = await source.get(id, versionId, options);
  const version = prompt.version;
  // The route answers the version it was asked for; a missing one is its 404.
  if (version === null || version.id !== versionId) throw clientError(404, `prompt ${id} has no version ${versionId}`);
  return { prompt, version };
}

/** The one prompt named `name` (the lists' every page); 404 when none is, 409 when several are. */
async function findByName(
  source: PromptSource,
  name: string,
  organizationId: string | undefined,
  options?: RequestOptions,
): Promise<Prompt> {
  const found: Prompt[] = [];
  for await (const prompt of source.list(organizationId, options)) if (prompt.name === name) found.push(prompt);
  const [only, ...others] = found;
  if (!only) throw clientError(404, `no prompt is named "${name}"`);
  if (others.length > 0) {
    throw clientError(
      409,
      `${found.length} prompts are named "${name}" (${found.map((p) => p.id)}): resolve one by id`,
    );
  }
  return only;
}

/**
 * Resolves names and ids to versions, remembering the id of each name found (and looking the name
 * up again when that prompt is gone or renamed).
 */
export class PromptResolver {
  readonly #ids = new Map<string, string>();

  constructor(
    private readonly source: PromptSource,
    private readonly maxNames = 1_000,
  ) {}

  async resolve(
    nameOrId: string,
    selector: VersionSelector & { organizationId?: string },
    options?: RequestOptions,
  ): Promise<Resolved> {
    if (PROMPT_ID.test(nameOrId)) return resolveById(this.source, nameOrId, selector, options);
    const key = `${selector.organizationId ?? ""}\n${nameOrId}`;
    const known = this.#ids.get(key);
    if (known !== undefined) {
      const resolved = await resolveById(this.source, known, selector, options).catch((e: unknown) => {
        if (e instanceof KilnError && e.status === 404) return undefined;
        throw e;
      });
      if (resolved?.prompt.name === nameOrId) return resolved;
      this.#ids.delete(key);
    }
    const head = await findByName(this.source, nameOrId, selector.organizationId, options);
    if (this.#ids.size >= this.maxNames) this.#ids.clear();
    this.#ids.set(key, head.id);
    return resolveById(this.source, head.id, selector, options, head);
  }
}
