/**
 * Export and import (docs/bundles.md; issue #18): `GET /api/organizations/:id/export` answers the
 * organization's bundle (`kiln.bundle/v1`); `POST /api/organizations/:id/import` takes a bundle or a
 * promptfoo config (JSON with `format: "promptfoo"`, or the YAML itself as `application/yaml`).
 *
 * The catalog runs the import whole behind one RPC (ImportOrganization: its part planned and
 * applied, the evaluation cases, the commit, or the undo of both); this route translates the body
 * and the report, and lets one import at a time through per gateway process.
 */

import type { MessageInitShape } from "@bufbuild/protobuf";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import {
  type Bundle,
  type BundleCase,
  BundleSchema,
  IMPORT_ITEM_KINDS,
  IMPORT_OUTCOMES,
  ImportItemSchema,
} from "@kiln/contracts/bundle";
import { jsonText } from "@kiln/kit/json-text";
import { LIMITS } from "@kiln/kit/limits";
import type { ImportOrganizationRequestSchema, ImportOrganizationResponse } from "@kiln/proto/catalog";
import type { FastifyRequest } from "fastify";
import Type, { type Static } from "typebox";
import { HttpError } from "../errors.js";
import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { rpcOptions } from "../http/request.js";
import { errorResponses, OneOf, ref } from "../schemas.js";
import { IdParams } from "./catalog-requests.js";
import { bundleCaseOf } from "./evaluation-case-mappers.js";

/** Bundles are larger than other bodies (docs/api.md "Limits"). */
export const MAX_IMPORT_BYTES = LIMITS.importBytes;

/**
 * Imports run one at a time in a gateway process, their bodies read only when their turn comes (a
 * waiting request holds its socket, not its body): an import at the limit takes about five times
 * its size while it is parsed, checked and sent (docs/operations.md "Memory headroom"), so 16 at
 * once would not fit a process's heap bound. Past IMPORT_QUEUE waiting, 429.
 */
const IMPORT_QUEUE = 32;

/**
 * The budget of the one catalog call an import is: the three steps it runs (its part, the
 * evaluation cases, the commit) had a call's default budget each when the gateway ran them.
 */
const IMPORT_TIMEOUT_MS = 90_000;

const FORMATS = ["kiln.bundle/v1", "promptfoo"] as const;

const DRY_RUN_VALUES = ["true", "false", "1", "0"] as const;

const YAML_TYPES = ["application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml"];

/** One line of an import's report: the schema the catalog and the evaluation service answer it in. */
export const ImportItemView = ImportItemSchema;

export const ImportReportView = Type.Object(
  {
    dryRun: Type.Boolean(),
    format: OneOf(FORMATS),
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
    files: Type.Optional(
      Type.Record(Type.String(), Type.String(), {
        description:
          "the files the config refers to (file:// prompts, tests, variables, assertion values), by their path relative to the config, each as its text; a referenced file missing here is reported for the item needing it",
      }),
    ),
    dryRun: Type.Optional(Type.Boolean()),
  },
  { $id: "PromptfooImport", additionalProperties: false },
);

/** The body as the OpenAPI document shows it. */
const ImportBody = Type.Unsafe<Record<string, unknown>>({
  description:
    'A kiln.bundle/v1 bundle (as the export answers it; `dryRun` may be added at its top level), or {format: "promptfoo", config, files?, dryRun?}. A promptfoo YAML file may also be sent as is with Content-Type application/yaml.',
  oneOf: [
    { allOf: [{ $ref: "Bundle" }], description: "a bundle; dryRun may also be given here" },
    { $ref: "PromptfooImport" },
  ],
});

/**
 * The body as the route checks it: an object whose `dryRun` is a boolean, and with
 * `format: "promptfoo"` a promptfoo import. A bundle is the catalog's to check, which names the
 * place of every problem (the union of ImportBody would answer each branch's complaints instead).
 */
const ImportBodyCheck = Type.Unsafe<Record<string, unknown> & { dryRun?: boolean }>({
  type: "object",
  properties: { dryRun: { type: "boolean" } },
  if: { type: "object", properties: { format: { const: "promptfoo" } }, required: ["format"] },
  // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then, not a promise.
  then: { $ref: "PromptfooImport" },
});

const ImportQuery = Type.Object({ dryRun: Type.Optional(OneOf(DRY_RUN_VALUES)) });

/** The RPC request of a checked body: a promptfoo config as its text or value, else the bundle. */
function importRequestOf(
  organizationId: string,
  body: Static<typeof ImportBodyCheck>,
  query: Static<typeof ImportQuery>,
): MessageInitShape<typeof ImportOrganizationRequestSchema> {
  const dryRun = query.dryRun === "true" || query.dryRun === "1" || body.dryRun === true;
  if (body.format === "promptfoo") {
    const config =
      typeof body.config === "string"
        ? { case: "text" as const, value: body.config }
        : { case: "value" as const, value: jsonText(body.config) };
    const files = isTextRecord(body.files) ? body.files : {};
    return { organizationId, dryRun, document: { case: "promptfoo", value: { config, files } } };
  }
  const { dryRun: _, ...bundle } = body;
  return { organizationId, dryRun, document: { case: "bundle", value: jsonText(bundle) } };
}

/** The checked `files` of a promptfoo import (PromptfooImport: strings by path). */
const isTextRecord = (v: unknown): v is Record<string, string> =>
  typeof v === "object" && v !== null && Object.values(v).every((t) => typeof t === "string");

/** A value the catalog answers, as one of those the view lists. */
function oneOf<const V extends readonly string[]>(values: V, value: string): V[number] {
  const known = values.find((v) => v === value);
  if (known === undefined) throw new Error(`the catalog answered "${value}", not one of ${values.join(", ")}`);
  return known;
}

/** The REST report of the catalog's (a conflict's id is null; a missing detail stays out). */
function importReportOf(r: ImportOrganizationResponse): Static<typeof ImportReportView> {
  const { created = 0, updated = 0, skipped = 0, conflicts = 0 } = r.summary ?? {};
  return {
    dryRun: r.dryRun,
    format: oneOf(FORMATS, r.format),
    summary: { created, updated, skipped, conflicts },
    items: r.items.map((i) => ({
      kind: oneOf(IMPORT_ITEM_KINDS, i.kind),
      sourceId: i.sourceId,
      id: i.id ?? null,
      name: i.name,
      outcome: oneOf(IMPORT_OUTCOMES, i.outcome),
      ...(i.detail !== undefined && { detail: i.detail }),
    })),
    warnings: r.warnings,
  };
}

export function registerBundleRoutes(app: GatewayApp, deps: GatewayDeps): void {
  const { catalog, evaluation, identity } = deps.clients;
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

  app.register(async (plain) => {
    const scope = plain.withTypeProvider<TypeBoxTypeProvider>();
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
        config: { ...config, documentedBody: ImportBody },
        bodyLimit: MAX_IMPORT_BYTES,
        schema: {
          tags,
          operationId: "importOrganization",
          summary:
            "Import a bundle or a promptfoo config: dryRun reports what would be created, updated, skipped or conflict; a real import is idempotent and applies whole or not at all",
          params: IdParams,
          querystring: ImportQuery,
          body: ImportBodyCheck,
          response: { 200: ref(ImportReportView), ...errorResponses(400, 401, 403, 404, 409, 413) },
        },
      },
      async (request) => {
        const input = importRequestOf(request.params.id, request.body, request.query);
        const options = { ...rpcOptions(request), timeoutMs: IMPORT_TIMEOUT_MS };
        return importReportOf(await catalog.importOrganization(input, options));
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
