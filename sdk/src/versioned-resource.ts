import type { components } from "./gen/kiln-api.js";
import { Labels } from "./labels.js";
import type { ListQuery, PaginatedList } from "./paginated-list.js";
import type { Query, RequestBody, VersionDiff } from "./resources.js";
import type { CallInit, FetchAnswer, IdempotentRequestOptions, RequestOptions, Transport } from "./transport.js";

type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/** A request as openapi-fetch takes it, whatever the path. */
interface RouteInit {
  params?: { path?: Record<string, string>; query?: object };
  body?: unknown;
}

/** What openapi-fetch answers, typed by the family: `T` on a 2xx. */
type Answer<T> = FetchAnswer & { data?: T };

/** openapi-fetch's methods as a family calls them: any path, the answer typed by the family. */
type Send = <T>(path: string, init: CallInit & RouteInit) => Promise<Answer<T>>;

/**
 * What a family of versioned resources (prompts, tools, skills, agents) is: its path under /api
 * and the types of its routes, all from the generated OpenAPI types (resources.ts).
 */
export interface VersionedFamily {
  path: "prompts" | "tools" | "skills" | "agents";
  resource: object;
  version: object;
  listQuery: { limit?: string; cursor?: string };
  create: object;
  update: object;
  /** createVersion's arguments after the id (the body is optional where the route takes `{}`). */
  createVersionArgs: [body?: object, options?: RequestOptions];
}

/** A body the caller must give, or may leave out (then `{}` is sent), and the call's options. */
export type BodyArgs<B> = [body: B, options?: RequestOptions];
export type OptionalBodyArgs<B> = [body?: B, options?: RequestOptions];

type Schemas = components["schemas"];

type RunsOf<N extends "Prompt" | "Skill" | "Agent"> = {
  getQuery: Query<`get${N}`>;
  run: RequestBody<`run${N}`>;
  runResult: Schemas[`${N}Run`];
  publishArgs: OptionalBodyArgs<RequestBody<`publish${N}Version`>>;
};

/**
 * A family's types by the names the OpenAPI document gives its schemas and operations (`Skill`,
 * `SkillVersion`, `listSkills`, `createSkill`, …, `getSkill`, `runSkill`, `SkillRun`), with the body
 * of createVersion and publish optional; `Own` gives the ones the family types otherwise.
 */
export type FamilyOf<N extends "Prompt" | "Tool" | "Skill" | "Agent", Own = unknown> = Omit<
  {
    path: `${Lowercase<N>}s`;
    resource: Schemas[N];
    version: Schemas[`${N}Version`];
    listQuery: Query<`list${N}s`>;
    create: RequestBody<`create${N}`>;
    update: RequestBody<`update${N}`>;
    createVersionArgs: OptionalBodyArgs<RequestBody<`create${N}Version`>>;
  } & (N extends "Tool" ? unknown : RunsOf<Exclude<N, "Tool">>),
  keyof Own
> &
  Own;

/** A family with labels, a published version and runs (prompts, skills, agents). */
export interface LabelledFamily extends VersionedFamily {
  path: "prompts" | "skills" | "agents";
  getQuery: object;
  /** publish's arguments after the id (the body is optional where the route takes `{}`). */
  publishArgs: [body?: object, options?: RequestOptions];
  run: object;
  runResult: object;
}

/**
 * The routes every family of versioned resources has, written once: list, create, update and a
 * new version, at `/api/{family}`. The family's types come from `F`.
 */
export class VersionedResource<F extends VersionedFamily> {
  constructor(
    protected readonly t: Transport,
    protected readonly family: F["path"],
  ) {}

  /**
   * Sends `/api/{family}{suffix}` through openapi-fetch. openapi-fetch types each literal path, and
   * a family's path is built from `family`: this is the one place the SDK sends a path it cannot
   * type (the one cast), so the answer is typed by the family (`T`), from the same generated types.
   */
  protected route<T>(method: Method, suffix: string, init: RouteInit, call: CallInit): Promise<Answer<T>> {
    const api = this.t.api as unknown as Record<Method, Send>;
    return api[method]<T>(`/api/${this.family}${suffix}`, { ...call, ...init });
  }

  /** One call of `/api/{family}{suffix}`: its 2xx answer, or KilnError. */
  protected send<T>(
    method: Method,
    suffix: string,
    init: RouteInit,
    options?: IdempotentRequestOptions,
    idempotent = false,
  ): Promise<T> {
    return this.t.call((call) => this.route<T>(method, suffix, init, call), options, idempotent);
  }

  /** The organization's resources of this family, newest first (an API key may omit organizationId). */
  list(query?: ListQuery<F["listQuery"]>, options?: RequestOptions): PaginatedList<F["resource"]> {
    return this.t.page<F["resource"], F["listQuery"]>(
      query,
      (call, wire) => this.route("GET", "", { params: { query: wire } }, call),
      options,
    );
  }

  create(body: F["create"], options?: RequestOptions): Promise<F["resource"]> {
    return this.send("POST", "", { body }, options);
  }

  update(id: string, body: F["update"], options?: RequestOptions): Promise<F["resource"]> {
    return this.send("PATCH", "/{id}", { params: { path: { id } }, body }, options);
  }

  /** A new version of the resource: a draft (prompts, skills, agents) or the current one (tools). */
  createVersion(id: string, ...[body, options]: F["createVersionArgs"]): Promise<F["version"]> {
    return this.send("POST", "/{id}/versions", { params: { path: { id } }, body: body ?? {} }, options);
  }

  /** The changes from `against` (default: the version before) to `versionId`. */
  protected versionDiff(
    id: string,
    versionId: string,
    query: { against?: string },
    options?: RequestOptions,
  ): Promise<VersionDiff> {
    return this.send("GET", "/{id}/versions/{versionId}/diff", { params: { path: { id, versionId }, query } }, options);
  }
}

/** A family with labels, a published version and runs: prompts, skills and agents. */
export class LabelledResource<F extends LabelledFamily> extends VersionedResource<F> {
  /** Named pointers to versions: production (the published version), latest, and your own. */
  readonly labels: Labels;

  constructor(t: Transport, family: F["path"]) {
    super(t, family);
    this.labels = new Labels(t, family);
  }

  /** The resource as of `versionId` (default: the draft or the published version, as the family says). */
  get(id: string, query: F["getQuery"] = {}, options?: RequestOptions): Promise<F["resource"]> {
    return this.send("GET", "/{id}", { params: { path: { id }, query } }, options);
  }

  /** Publishes `versionId` (default, where the family allows it: the draft); answers the resource. */
  publish(id: string, ...[body, options]: F["publishArgs"]): Promise<F["resource"]> {
    return this.send("POST", "/{id}/publish", { params: { path: { id } }, body: body ?? {} }, options);
  }

  /** Runs the published version (or `versionId`) and stores the run. */
  run(id: string, body: F["run"], options?: IdempotentRequestOptions): Promise<F["runResult"]> {
    return this.send("POST", "/{id}/run", { params: { path: { id } }, body }, options, true);
  }
}
