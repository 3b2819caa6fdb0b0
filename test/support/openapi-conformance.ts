import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";

/**
 * Checks what a live gateway answers against its own OpenAPI document: every response of every
 * request sent through `fetch` is matched to its documented operation and status and validated
 * with ajv against that response's schema (a `text/event-stream` answer: the JSON data of each of its
 * events, against the schema documented for that media type). Object schemas with declared properties are taken as
 * closed (the answers carry exactly the documented fields); free-form JSON stays open.
 */

interface Operation {
  operationId?: string;
  "x-api-stability"?: string;
  responses: Record<string, { content?: Record<string, { schema?: unknown }> }>;
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown> };
}

interface Route {
  method: string;
  template: string;
  pattern: RegExp;
  operation: Operation;
}

// ajv-formats is CommonJS: its default export arrives as the module object under NodeNext.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

const DOC_ID = "https://kiln.invalid/openapi.json";
const pointerPart = (s: string) => s.replace(/~/g, "~0").replace(/\//g, "~1");

/** A copy in which every object schema that lists properties and says nothing else is closed. */
function closeObjects(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(closeObjects);
  if (node === null || typeof node !== "object") return node;
  const copy: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) copy[k] = k === "properties" ? closeProperties(v) : closeObjects(v);
  if ("properties" in copy && !("additionalProperties" in copy) && !("patternProperties" in copy)) {
    copy.additionalProperties = false;
  }
  return copy;
}

const closeProperties = (properties: unknown) =>
  Object.fromEntries(Object.entries(properties as Record<string, unknown>).map(([k, v]) => [k, closeObjects(v)]));

export function createConformanceChecker(doc: OpenApiDocument) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ ...doc, components: closeObjects(doc.components), paths: closeObjects(doc.paths) }, DOC_ID);

  // Static segments win over parameters (/api/agent-runs/compare before /api/agent-runs/{id}).
  const routes: Route[] = Object.entries(doc.paths)
    .flatMap(([template, operations]) =>
      Object.entries(operations).map(([method, operation]) => ({
        method: method.toUpperCase(),
        template,
        pattern: new RegExp(`^${template.replace(/\{\w+\}/g, "[^/]+").replace(/\./g, "\\.")}$`),
        operation,
      })),
    )
    .sort((a, b) => (a.template.match(/\{/g)?.length ?? 0) - (b.template.match(/\{/g)?.length ?? 0));

  const validators = new Map<string, ValidateFunction>();
  const violations: string[] = [];
  /** `METHOD template status` of every answer seen. */
  const seen = new Set<string>();

  function validatorOf(route: Route, status: string, media: string): ValidateFunction | undefined {
    const key = `${route.method} ${route.template} ${status} ${media}`;
    if (!validators.has(key)) {
      const pointer = ["paths", route.template, route.method.toLowerCase(), "responses", status, "content", media]
        .map(pointerPart)
        .join("/");
      if (!route.operation.responses[status]?.content?.[media]?.schema) return undefined;
      validators.set(key, ajv.compile({ $ref: `${DOC_ID}#/${pointer}/schema` }));
    }
    return validators.get(key);
  }

  /** Checks one answer; returns the problems found (also kept for `violations`). */
  function check(
    method: string,
    url: string,
    response: { status: number; headers: Headers },
    body: unknown,
    media = "application/json",
  ) {
    const path = new URL(url).pathname;
    const problems: string[] = [];
    const route = routes.find((r) => r.method === method && r.pattern.test(path));
    if (!route) {
      if (response.status !== 404) problems.push(`${method} ${path}: no documented operation`);
    } else {
      const status = String(response.status);
      const where = `${method} ${route.template} → ${status}`;
      seen.add(`${method} ${route.template} ${status}`);
      if (!route.operation.responses[status]) problems.push(`${where}: status not documented`);
      else if (!route.operation.responses[status]?.content) {
        // Documented without content (a redirect): it must have none.
        if (body !== undefined) problems.push(`${where}: a body where none is documented`);
      } else {
        const validate = validatorOf(route, status, media);
        if (!validate) problems.push(`${where}: no ${media} response schema`);
        else if (!validate(body))
          problems.push(`${where}: ${ajv.errorsText(validate.errors)} in ${JSON.stringify(body).slice(0, 500)}`);
      }
      const stability = response.headers.get("x-api-stability");
      if (stability !== route.operation["x-api-stability"]) {
        problems.push(`${where}: x-api-stability ${stability}, documented ${route.operation["x-api-stability"]}`);
      }
      if (!response.headers.get("x-request-id")) problems.push(`${where}: no x-request-id`);
    }
    violations.push(...problems);
    return problems;
  }

  /** A fetch that checks every JSON answer on its way. */
  async function checkedFetch(input: Request): Promise<Response> {
    const response = await fetch(input);
    const text = await response.text();
    if (response.headers.get("content-type")?.startsWith("text/event-stream")) {
      const events = text.split("\n\n").filter((e) => e.startsWith("data: "));
      for (const event of events)
        check(input.method, input.url, response, JSON.parse(event.slice(6)), "text/event-stream");
    } else check(input.method, input.url, response, text === "" ? undefined : JSON.parse(text));
    return new Response(text === "" ? null : text, response);
  }

  return {
    fetch: checkedFetch,
    check,
    violations,
    /** Documented operations no answer with a 2xx status (3xx for one that only redirects) was seen for. */
    unexercised(): string[] {
      const success = (r: Route) => (Object.keys(r.operation.responses).some((s) => s.startsWith("2")) ? "2" : "3");
      return routes
        .filter((r) => ![...seen].some((s) => s.startsWith(`${r.method} ${r.template} ${success(r)}`)))
        .map((r) => `${r.method} ${r.template}`);
    },
    seen,
  };
}
