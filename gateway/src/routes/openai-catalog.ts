/**
 * What the /v1 routes look up in the catalog: the caller's organization, its prompts and skills
 * (by id or name), and their labels, as models (docs/openai-compatible.md "Models").
 */
import { Code, ConnectError } from "@connectrpc/connect";
import type { FastifyRequest } from "fastify";
import type { GatewayDeps } from "../http/gateway-app.js";
import { everyPage } from "../http/list-page.js";
import { principalOf, rpcOptions } from "../http/request.js";
import { badRequest } from "./openai-errors.js";
import { DEFAULT_LABEL, type ModelRef } from "./openai-model-ref.js";

/** A prompt or skill as the catalog lists it. */
export interface Callable {
  id: string;
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
  /** The label the model runs; "production" (the published version) when the id names none. */
  label: string;
}

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

export function openAiCatalog(deps: GatewayDeps) {
  const { catalog } = deps.clients;

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

  const modelOf = (kind: ModelRef["kind"], item: Callable, organizationId: string, label: string): OpenAiModel => ({
    id: `${prefixOf(kind)}${item.id}${label === DEFAULT_LABEL ? "" : `@${label}`}`,
    object: "model",
    created: seconds(item.createdAt),
    owned_by: organizationId,
    name: item.name,
    label,
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

    /** The prompt or skill a model names, by id first, then by name; undefined when none. */
    async find(request: FastifyRequest, organizationId: string, ref: ModelRef): Promise<Callable | undefined> {
      const items = await (ref.kind === "prompt" ? allPrompts : allSkills)(request, organizationId);
      return items.find((i) => i.id === ref.ref) ?? items.find((i) => i.name === ref.ref);
    },

    labelsOf,
    modelOf,

    /** Every model the caller may list: published prompts and skills, and each of their labels. */
    async listModels(request: FastifyRequest, organizationId: string): Promise<OpenAiModel[]> {
      const [prompts, skills] = await Promise.all([
        readable(allPrompts(request, organizationId)),
        readable(allSkills(request, organizationId)),
      ]);
      const entries = [
        ...prompts.map((item) => ({ kind: "prompt" as const, item })),
        ...skills.map((item) => ({ kind: "skill" as const, item })),
      ];
      const models: OpenAiModel[][] = [];
      // A few label reads at a time, in list order.
      for (let i = 0; i < entries.length; i += 8) {
        const batch = entries.slice(i, i + 8);
        models.push(
          ...(await Promise.all(
            batch.map(async ({ kind, item }) => [
              ...(item.publishedVersionId ? [modelOf(kind, item, organizationId, DEFAULT_LABEL)] : []),
              ...(await labelsOf(request, kind, item.id)).map((label) => modelOf(kind, item, organizationId, label)),
            ]),
          )),
        );
      }
      return models.flat();
    },
  };
}

export type OpenAiCatalog = ReturnType<typeof openAiCatalog>;
