import Type from "typebox";
import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { listPage, pageOf } from "../http/list-page.js";
import { answers, listAnswers, operations } from "../http/operation.js";
import { rpcOptions } from "../http/request.js";
import { Body, ListQuery, Nullable } from "../schemas.js";
import { CacheTtlSeconds, Id, IdParams, LabelName } from "./catalog-requests.js";
import { LabelMoveView, LabelView, labelMoveView, labelView } from "./label-views.js";

const LabelParams = Type.Object({ id: Id, label: LabelName });

/** A prompt label may also carry a response-cache default (docs/cache.md "Defaults"); skill and agent runs do not cache. */
const SetLabelBody = {
  prompt: Body({
    versionId: Id,
    cacheTtlSeconds: Type.Optional(
      Nullable(CacheTtlSeconds(" (runs through the label); null removes it, absent keeps it")),
    ),
  }),
  skill: Body({ versionId: Id }),
  agent: Body({ versionId: Id }),
};

const FAMILIES = [
  { kind: "prompt", base: "/api/prompts", tag: "prompts", name: "Prompt" },
  { kind: "skill", base: "/api/skills", tag: "skills", name: "Skill" },
  { kind: "agent", base: "/api/agents", tag: "agents", name: "Agent" },
] as const;

/** Labels of prompts, skills and agents (docs/labels.md; issue #17). */
export function registerLabelRoutes(app: GatewayApp, deps: GatewayDeps): void {
  const { catalog } = deps.clients;

  for (const { kind, base, tag, name } of FAMILIES) {
    const op = operations({ tags: [tag], stability: "beta" });

    app.get(
      `${base}/:id/labels`,
      op(`list${name}Labels`, `Every label of a ${kind}: production and latest first, then the others by name`, {
        params: IdParams,
        response: listAnswers(LabelView, 400, 401, 403, 404),
      }),
      async (request) => {
        const r = await catalog.listLabels({ kind, parentId: request.params.id }, rpcOptions(request));
        return listPage(r.labels, labelView);
      },
    );

    app.put(
      `${base}/:id/labels/:label`,
      op(
        `set${name}Label`,
        `Point a label of a ${kind} at a version; moving production publishes it (latest is read-only)`,
        { params: LabelParams, body: SetLabelBody[kind], response: answers(LabelView, 400, 401, 403, 404, 409) },
      ),
      async (request) => {
        const { id, label } = request.params;
        const body = request.body as { versionId: string; cacheTtlSeconds?: number | null };
        const r = await catalog.setLabel(
          {
            kind,
            parentId: id,
            label,
            versionId: body.versionId,
            cacheTtlSeconds: body.cacheTtlSeconds ?? undefined,
            clearCacheTtlSeconds: body.cacheTtlSeconds === null,
          },
          rpcOptions(request),
        );
        return labelView(r.label);
      },
    );

    app.delete(
      `${base}/:id/labels/:label`,
      op(`delete${name}Label`, `Remove a label of a ${kind} (not production or latest); answers it as it was`, {
        params: LabelParams,
        response: answers(LabelView, 400, 401, 403, 404, 409),
      }),
      async (request) => {
        const { id, label } = request.params;
        const r = await catalog.deleteLabel({ kind, parentId: id, label }, rpcOptions(request));
        return labelView(r.label);
      },
    );

    app.get(
      `${base}/:id/labels/:label/history`,
      op(`list${name}LabelHistory`, `Every move of one label of a ${kind}, newest first`, {
        params: LabelParams,
        querystring: Type.Object(ListQuery),
        response: listAnswers(LabelMoveView, 400, 401, 403, 404),
      }),
      async (request) => {
        const { id, label } = request.params;
        const r = await catalog.listLabelHistory(
          { kind, parentId: id, label, ...pageOf(request.query) },
          rpcOptions(request),
        );
        return listPage(r.moves, labelMoveView, r.nextCursor);
      },
    );
  }
}
