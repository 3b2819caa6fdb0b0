/**
 * Export and import (docs/bundles.md; issue #18): `GET /api/organizations/:id/export` answers the
 * organization's bundle (`kiln.bundle/v1`); `POST /api/organizations/:id/import` takes a bundle or a
 * promptfoo config (JSON with `format: "promptfoo"`, or the YAML itself as `application/yaml`).
 *
 * The catalog and the evaluation service each import their part; this route runs them in order:
 * the catalog's part (planned whole, then applied), the evaluation cases, then the catalog's commit.
 * When the cases fail the catalog's part is undone; nothing is left half-imported.
 */

import { parsePromptfooConfig, promptfooToBundle } from "@kiln/catalog/promptfoo";
import { type Bundle, type BundleCase, BundleSchema, type ImportItem, ImportItemSchema } from "@kiln/contracts/bundle";
import { LIMITS } from "@kiln/kit/limits";
import type { FastifyRequest } from "fastify";
import Type from "typebox";
import { HttpError } from "../errors.js";
import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { rpcOptions } from "../http/request.js";
import { errorResponses, OneOf, ref } from "../schemas.js";
import { IdParams } from "./catalog-requests.js";
import { bundleCaseOf } from "./evaluation-case-mappers.js";
import { isObject } from "./views.js";

/** Bundles are larger than other bodies (docs/api.md "Limits"). */
export const MAX_IMPORT_BYTES = LIMITS.importBytes;

/**
 * Imports run one at a time in a gateway process, their bodies read only when their turn comes (a
 * waiting request holds its socket, not its body): an import at the limit takes about five times
 * its size while it is parsed, checked and sent (docs/operations.md "Memory headroom"), so 16 at
 * once would not fit a process's heap bound. Past IMPORT_QUEUE waiting, 429.
 */
const IMPORT_QUEUE = 32;

const DRY_RUN_VALUES = ["true", "false", "1", "0"] as const;

const YAML_TYPES = ["application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml"];

/** One line of an import's report: the schema the catalog and the evaluation service answer it in. */
export const ImportItemView = ImportItemSchema;

export const ImportReportView = Type.Object(
  {
    dryRun: Type.Boolean(),
    format: OneOf(["kiln.bundle/v1", "promptfoo"]),
    summary: Type.Object({
      created: Type.Integer(),
      updated: Type.Integer(),
      skipped: Type.Integer(),
      conflicts: Type.Integer(),
    }),
    items: Type.Array(ref(ImportItemView)),
    warnings: Type.Array(Type.String(), {
      description:
        "what could not be imported as it is (promptfoo: unmapped assertions, providers without a model here)",
    }),
  },
  { $id: "ImportReport" },
);

export const PromptfooImportBody = Type.Object(
  {
    format: Type.Literal("promptfoo"),
    config: Type.Union([
      Type.String({ description: "the YAML or JSON text" }),
      Type.Record(Type.String(), Type.Unknown()),
    ]),
    dryRun: Type.Optional(Type.Boolean()),
  },
  { $id: "PromptfooImport", additionalProperties: false },
);

const ImportBody = Type.Unsafe<Record<string, unknown>>({
  description:
    'A kiln.bundle/v1 bundle (as the export answers it; `dryRun` may be added at its top level), or {format: "promptfoo", config, dryRun?}. A promptfoo YAML file may also be sent as is with Content-Type application/yaml.',
  oneOf: [
    { allOf: [{ $ref: "Bundle" }], description: "a bundle; dryRun may also be given here" },
    { $ref: "PromptfooImport" },
  ],
});

export function registerBundleRoutes(app: GatewayApp, deps: GatewayDeps): void {
  const { catalog, evaluation, identity, execution } = deps.clients;
  const config = { stability: "beta" as const };
  const tags = ["organizations"];

  app.get(
    "/api/organizations/:id/export",
    {
      config,
      schema: {
        tags,
        operationId: "exportOrganization",
        summary:
          "The organization's prompts, tools, skills and agents with every version, labels and evaluation cases (never secrets, runs or members)",
        params: IdParams,
        response: { 200: ref(BundleSchema), ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => {
      const organizationId = request.params.id;
      const options = rpcOptions(request);
      const [org, catalogPart, cases] = await Promise.all([
        identity.getOrganization({ organizationId }, options),
        catalog.exportBundle({ organizationId }, options),
        evaluation.exportEvaluationCases({ organizationId }, options),
      ]);
      const bundle = JSON.parse(catalogPart.bundleJson) as Bundle;
      const bySkill = new Map<string, BundleCase[]>();
      for (const k of cases.cases) bySkill.set(k.skillId, [...(bySkill.get(k.skillId) ?? []), bundleCaseOf(k)]);
      for (const skill of bundle.skills) skill.evaluationCases = bySkill.get(skill.id) ?? [];
      return {
        format: bundle.format,
        exportedAt: bundle.exportedAt,
        organization: { id: organizationId, name: org.organization?.name ?? "" },
        tools: bundle.tools,
        prompts: bundle.prompts,
        skills: bundle.skills,
        agents: bundle.agents,
      };
    },
  );

  /** Where a promptfoo config's providers land: the models here, else local/echo (always there). */
  async function modelCatalog(request: FastifyRequest) {
    const r = await execution.listModels({}, rpcOptions(request));
    const ids = r.models.filter((m) => m.available).map((m) => m.id);
    return { ids, fallback: ids.includes("local/echo") ? "local/echo" : (ids[0] ?? "local/echo") };
  }

  async function runImport(request: FastifyRequest, organizationId: string, body: unknown, queryDryRun: boolean) {
    if (!isObject(body)) {
      throw new HttpError("invalid_argument", "the body must be a bundle or a promptfoo import", [
        { field: "body", issue: "must be an object" },
      ]);
    }
    let dryRun = queryDryRun;
    if (body.dryRun !== undefined) {
      if (typeof body.dryRun !== "boolean")
        throw new HttpError("invalid_argument", "dryRun must be a boolean", [
          { field: "dryRun", issue: "must be a boolean" },
        ]);
      dryRun = dryRun || body.dryRun;
    }
    let bundle: Record<string, unknown>;
    let warnings: string[] = [];
    const format = body.format === "promptfoo" ? "promptfoo" : "kiln.bundle/v1";
    if (format === "promptfoo") {
      for (const key of Object.keys(body)) {
        if (!["format", "config", "dryRun"].includes(key))
          throw new HttpError("invalid_argument", `${key} is not a field of a promptfoo import`, [
            { field: key, issue: "is not a field of a promptfoo import" },
          ]);
      }
      const converted = promptfooToBundle(parsePromptfooConfig(body.config), await modelCatalog(request), new Date());
      bundle = converted.bundle;
      warnings = converted.warnings;
    } else {
      const { dryRun: _, ...rest } = body;
      bundle = rest;
    }
    const options = rpcOptions(request);
    const planned = await catalog.importBundle({ organizationId, bundleJson: JSON.stringify(bundle), dryRun }, options);
    const items = JSON.parse(planned.itemsJson) as ImportItem[];
    const skills = new Map(
      (JSON.parse(planned.skillsJson) as { sourceId: string; id: string; created: boolean }[]).map((s) => [
        s.sourceId,
        s,
      ]),
    );
    // The catalog checked the bundle's shape, evaluation cases included.
    const cases = ((bundle as Bundle).skills ?? []).flatMap((s, i) => {
      const skill = skills.get(s.id);
      if (!skill) return [];
      return s.evaluationCases.map((k, j) => ({
        skillId: skill.id,
        skillCreated: skill.created,
        field: `skills[${i}].evaluationCases[${j}]`,
        case: k,
      }));
    });
    const finish = (commit: boolean) =>
      catalog.finishImport({ organizationId, importId: planned.importId, commit }, options);
    if (cases.length > 0) {
      try {
        const r = await evaluation.importEvaluationCases(
          { organizationId, importId: planned.importId, dryRun, casesJson: JSON.stringify(cases) },
          options,
        );
        items.push(...(JSON.parse(r.itemsJson) as ImportItem[]));
      } catch (e) {
        if (!dryRun) await undoQuietly(request, () => finish(false));
        throw e;
      }
    }
    if (!dryRun) {
      try {
        await finish(true);
      } catch (e) {
        await undoQuietly(request, () =>
          evaluation.undoEvaluationCaseImport({ organizationId, importId: planned.importId }, options),
        );
        await undoQuietly(request, () => finish(false));
        throw e;
      }
    }
    const count = (outcome: ImportItem["outcome"]) => items.filter((i) => i.outcome === outcome).length;
    return {
      dryRun,
      format,
      summary: {
        created: count("created"),
        updated: count("updated"),
        skipped: count("skipped"),
        conflicts: count("conflict"),
      },
      items,
      warnings,
    };
  }

  async function undoQuietly(request: FastifyRequest, undo: () => Promise<unknown>) {
    try {
      await undo();
    } catch (err) {
      request.log.error({ err }, "undoing a failed import failed; the catalog's sweep undoes it later");
    }
  }

  app.register(async (scope) => {
    const turns = oneAtATime(IMPORT_QUEUE);
    const done = new WeakMap<FastifyRequest, () => void>();
    // Authentication (onRequest) first; the body is read once the turn has come.
    scope.addHook("preParsing", async (request) => {
      done.set(request, await turns.take());
    });
    const release = async (request: FastifyRequest) => {
      done.get(request)?.();
      done.delete(request);
    };
    scope.addHook("onResponse", release);
    scope.addHook("onRequestAbort", release);
    // A promptfoo YAML file as it is on disk.
    scope.addContentTypeParser(YAML_TYPES, { parseAs: "string", bodyLimit: MAX_IMPORT_BYTES }, (_req, body, done) => {
      done(null, { format: "promptfoo", config: typeof body === "string" ? body : body.toString("utf8") });
    });
    scope.post(
      "/api/organizations/:id/import",
      {
        config,
        bodyLimit: MAX_IMPORT_BYTES,
        // The catalog checks a bundle (every problem with its place), the converter a promptfoo
        // config: the union here only documents the body.
        validatorCompiler: () => () => true,
        schema: {
          tags,
          operationId: "importOrganization",
          summary:
            "Import a bundle or a promptfoo config: dryRun reports what would be created, updated, skipped or conflict; a real import is idempotent and applies whole or not at all",
          params: IdParams,
          querystring: Type.Object({ dryRun: Type.Optional(OneOf(DRY_RUN_VALUES)) }),
          body: ImportBody,
          response: { 200: ref(ImportReportView), ...errorResponses(400, 401, 403, 404, 409, 413) },
        },
      },
      async (request) => {
        const { id } = request.params as { id: string };
        // The route's validator passes everything (see above), so the query is checked here.
        const { dryRun } = request.query as { dryRun?: unknown };
        if (dryRun !== undefined && !(DRY_RUN_VALUES as readonly string[]).includes(String(dryRun)))
          throw new HttpError("invalid_argument", "dryRun must be true or false", [
            { field: "dryRun", issue: "must be true or false" },
          ]);
        return runImport(request, id, request.body, dryRun === "true" || dryRun === "1");
      },
    );
  });
}

/** A queue of turns, one at a time; `take` answers the function that ends the turn. */
function oneAtATime(maxWaiting: number): { take(): Promise<() => void> } {
  let busy = false;
  const waiting: (() => void)[] = [];
  const next = () => {
    const wake = waiting.shift();
    if (wake) wake();
    else busy = false;
  };
  return {
    async take() {
      if (busy) {
        if (waiting.length >= maxWaiting)
          throw new HttpError("resource_exhausted", `${maxWaiting} imports are waiting already; retry later`);
        await new Promise<void>((resolve) => waiting.push(resolve));
      }
      busy = true;
      let ended = false;
      return () => {
        if (ended) return;
        ended = true;
        next();
      };
    },
  };
}
