/**
 * What the /v1 routes look up in the catalog: the caller's organization, its prompts and skills
 * (by id or name), and their labels, as models, and the models it may call directly: the
 * deployment's and its provider connections' (docs/openai-compatible.md "Models").
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { isId } from "@kiln/kit/ids";
import type { FastifyRequest } from "fastify";
import { labelsOfEach } from "../http/catalog-labels.js";
import type { GatewayDeps } from "../http/gateway-app.js";
import { everyPage } from "../http/list-page.js";
import { principalOf, rpcOptions } from "../http/request.js";
import { badRequest } from "./openai-errors.js";
import { DEFAULT_LABEL, type ModelRef } from "./openai-model-ref.js";

/** A prompt or skill as the catalog lists it. */
export interface Callable {
  id: string;
  organizationId: string;
  name: string;
  publishedVersionId?: string;
  createdAt?: { seconds: bigint };
}

export interface OpenAiModel {
  id: string;
  object: "model";
  created: number;
  owned_by: string;
  name: string;
  /** The label the model runs; "production" (the published version) when the id names none; absent for a model run directly. */
  label?: string;
  /** Anthropic's model fields (its SDKs' `models.list`, docs/anthropic-compatible.md "Models"). */
  type: "model";
  display_name: string;
  created_at: string;
}

/** A model of the deployment has no creation time of its own: it is offered since this process started. */
const LISTED_SINCE = new Date();

const seconds = (t: { seconds: bigint } | undefined) => (t ? Number(t.seconds) : Math.floor(Date.now() / 1000));

const prefixOf = (kind: ModelRef["kind"]) => (kind === "skill" ? "kiln/skill/" : "kiln/");

/** What may not be read (a key without prompts:read, skills:read) reads as nothing. */
async function readable<T>(list: Promise<T[]>): Promise<T[]> {
  try {
    return await list;
  } catch (e) {
    if (e instanceof ConnectError && e.code === Code.PermissionDenied) return [];
    throw e;
  }
}

/** A lookup of something that may not exist: not found (or not visible) is undefined. */
async function absent<T>(lookup: Promise<T>): Promise<T | undefined> {
  try {
    return await lookup;
  } catch (e) {
    if (e instanceof ConnectError && e.code === Code.NotFound) return undefined;
    throw e;
  }
}

export function openAiCatalog(deps: GatewayDeps) {
  const { catalog, execution } = deps.clients;

  /** The models the organization may call without a prompt: the deployment's it has keys for, and its connections'. */
  const directModels = async (request: FastifyRequest, organizationId: string): Promise<OpenAiModel[]> => {
    const { models } = await execution.listModels({ organizationId }, rpcOptions(request));
    return models
      .filter((m) => m.available)
      .map((m) => ({
        id: m.id,
        object: "model",
        created: Math.floor(LISTED_SINCE.getTime() / 1000),
        // A connection's model is its organization's; the deployment's, its provider's.
        owned_by: m.connectionId ? organizationId : m.provider,
        name: m.id,
        type: "model",
        display_name: m.id,
        created_at: LISTED_SINCE.toISOString(),
      }));
  };

  const allPrompts = (request: FastifyRequest, organizationId: string): Promise<Callable[]> =>
    everyPage(async (cursor) => {
      const page = await catalog.listPrompts({ organizationId, limit: 100, cursor }, rpcOptions(request));
      return { items: page.prompts, nextCursor: page.nextCursor };
    });

  const allSkills = (request: FastifyRequest, organizationId: string): Promise<Callable[]> =>
    everyPage(async (cursor) => {
      const page = await catalog.listSkills({ organizationId, limit: 100, cursor }, rpcOptions(request));
      return { items: page.skills, nextCursor: page.nextCursor };
    });

  /** The labels of a prompt or skill other than production (which the plain id runs). */
  const labelsOf = async (request: FastifyRequest, kind: ModelRef["kind"], parentId: string): Promise<string[]> =>
    (
      await readable(
        catalog.listLabels({ kind, parentId }, rpcOptions(request)).then((r) => r.labels.map((l) => l.label)),
      )
    ).filter((l) => l !== DEFAULT_LABEL);

  /** Each item's models, in order: production (when published), then its other labels. */
  const modelsOf = async (
    request: FastifyRequest,
    organizationId: string,
    kind: ModelRef["kind"],
    items: Callable[],
  ): Promise<OpenAiModel[]> => {
    const ids = items.map((item) => item.id);
    const labels = await readable(
      labelsOfEach(catalog, kind, ids, rpcOptions(request)).then((byParent) => [...byParent.values()].flat()),
    );
    const byParent = new Map<string, string[]>();
    for (const { parentId, label } of labels) {
      if (label !== DEFAULT_LABEL) byParent.set(parentId, [...(byParent.get(parentId) ?? []), label]);
    }
    return items.flatMap((item) => [
      ...(item.publishedVersionId ? [modelOf(kind, item, organizationId, DEFAULT_LABEL)] : []),
      ...(byParent.get(item.id) ?? []).map((label) => modelOf(kind, item, organizationId, label)),
    ]);
  };

  const modelOf = (kind: ModelRef["kind"], item: Callable, organizationId: string, label: string): OpenAiModel => ({
    id: `${prefixOf(kind)}${item.id}${label === DEFAULT_LABEL ? "" : `@${label}`}`,
    object: "model",
    created: seconds(item.createdAt),
    owned_by: organizationId,
    name: item.name,
    label,
    type: "model",
    display_name: label === DEFAULT_LABEL ? item.name : `${item.name}@${label}`,
    created_at: new Date(seconds(item.createdAt) * 1000).toISOString(),
  });

  return {
    allPrompts,
    allSkills,

    /** The organization of the API key (or the `organization` an access token's caller names). */
    organizationOfCaller(request: FastifyRequest): string {
      const principal = principalOf(request);
      if (principal.type === "api_key") return principal.organizationId;
      const given = request.headers["openai-organization"];
      if (typeof given === "string" && given) return given;
      throw badRequest("an access token must name the organization in the OpenAI-Organization header", null);
    },

    /**
     * The prompt or skill a model names, by id first, then by name (the newest of that name);
     * undefined when none. Looked up directly: never a listing of the organization's catalog.
     */
    async find(request: FastifyRequest, organizationId: string, ref: ModelRef): Promise<Callable | undefined> {
      const options = rpcOptions(request);
      // Only what reads as an id of the kind is looked up as one (a name goes straight to the name).
      const byId = !isId(ref.ref, ref.kind === "prompt" ? "prm" : "skl")
        ? undefined
        : await absent<Callable | undefined>(
            ref.kind === "prompt"
              ? catalog.getPrompt({ id: ref.ref }, options).then((r) => r.prompt)
              : catalog.getSkill({ id: ref.ref }, options).then((r) => r.skill),
          );
      // An id of another organization the caller may read (an access token's) is not this one's.
      if (byId?.organizationId === organizationId) return byId;
      const named = { organizationId, name: ref.ref, limit: 1, cursor: "" };
      return ref.kind === "prompt"
        ? (await catalog.listPrompts(named, options)).prompts[0]
        : (await catalog.listSkills(named, options)).skills[0];
    },

    labelsOf,
    modelOf,
    directModels,

    /** Every model the caller may list: published prompts and skills, each of their labels, and the models it may call directly. */
    async listModels(request: FastifyRequest, organizationId: string): Promise<OpenAiModel[]> {
      const [prompts, skills, direct] = await Promise.all([
        readable(allPrompts(request, organizationId)),
        readable(allSkills(request, organizationId)),
        readable(directModels(request, organizationId)),
      ]);
      // Their labels in a few batched reads, in list order.
      const [promptModels, skillModels] = await Promise.all([
        modelsOf(request, organizationId, "prompt", prompts),
        modelsOf(request, organizationId, "skill", skills),
      ]);
      return [...promptModels, ...skillModels, ...direct];
    },
  };
}

export type OpenAiCatalog = ReturnType<typeof openAiCatalog>;
