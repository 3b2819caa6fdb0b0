import { AjvCompiler, type ValidatorFactory } from "@fastify/ajv-compiler";

/** What Fastify hands a validator compiler: one part of one route's schema. */
interface RouteSchema {
  schema: unknown;
  method: string;
  url: string;
  httpPart?: string;
}
type Validate = ((...args: unknown[]) => unknown) & { errors?: unknown; schemaEnv?: unknown };
/** Fastify's validator factory, typed as Fastify calls it (the package's own types name the schema, not the route). */
type BuildValidator = (externalSchemas: Record<string, unknown>, options?: unknown) => (route: RouteSchema) => Validate;

export interface LazyValidators {
  /** For Fastify's `schemaController.compilersFactory.buildValidator`. */
  buildValidator: ValidatorFactory;
  /** Compiles every schema not compiled yet (a broken one throws); answers how many were handed out. */
  compileAll(): number;
}

/**
 * Fastify's own validator factory (@fastify/ajv-compiler: the same Ajv options, the same shared
 * schemas), with each route's schema compiled on the route's first request instead of while the
 * server gets ready: Ajv compiling the gateway's route schemas was a fifth of the CPU of
 * `pnpm start` (docs/benchmarks.md). `compileAll` compiles what is left, so that a test still
 * finds a broken schema without sending a request to every route.
 *
 * Fastify treats a factory it did not build as custom, and then leaves header schemas as they
 * are: their property names are lower-cased here instead (Node lower-cases the names it receives).
 */
export function lazyValidators(): LazyValidators {
  const build = AjvCompiler() as unknown as BuildValidator;
  /** One per schema handed out; each compiles its schema once, on its first call. */
  const compilers: (() => Validate)[] = [];
  const buildValidator: BuildValidator = (externalSchemas, ajvOptions) => {
    const compile = build(externalSchemas, ajvOptions);
    return (route: RouteSchema) => {
      const routeSchema = route.httpPart === "headers" ? { ...route, schema: lowerCaseHeaders(route.schema) } : route;
      let compiled: Validate | undefined;
      const compiledNow = (): Validate => {
        if (!compiled) {
          compiled = compile(routeSchema);
          // From now on a plain property, not a getter, on every request's path.
          Object.defineProperty(validate, "schemaEnv", { value: compiled.schemaEnv });
        }
        return compiled;
      };
      compilers.push(compiledNow);
      const validate: Validate = (...args) => {
        const v = compiledNow();
        const valid = v(...args);
        // Fastify reads `errors` off the function it called.
        validate.errors = v.errors;
        return valid;
      };
      // Fastify looks for Ajv's `schemaEnv` before it calls (to pass the parent data along): the
      // first look compiles.
      Object.defineProperty(validate, "schemaEnv", {
        get: () => compiledNow().schemaEnv,
        configurable: true,
      });
      return validate;
    };
  };
  return {
    buildValidator: buildValidator as unknown as ValidatorFactory,
    compileAll() {
      for (const compileNow of compilers) compileNow();
      return compilers.length;
    },
  };
}

/** Header names lower-cased where a header schema names them (its properties and required). */
function lowerCaseHeaders(schema: unknown): unknown {
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) return schema;
  const s = schema as { properties?: Record<string, unknown>; required?: unknown };
  return {
    ...s,
    ...(s.properties && {
      properties: Object.fromEntries(Object.entries(s.properties).map(([k, v]) => [k.toLowerCase(), v])),
    }),
    ...(Array.isArray(s.required) && { required: s.required.map((r) => String(r).toLowerCase()) }),
  };
}
