import { Ajv, type ValidateFunction } from "ajv";
import addFormats from "ajv-formats";
import type { FastifyInstance } from "fastify";
// fastify's own default serializer compiler (the version fastify itself depends on), wrapped below
import { SerializerSelector } from "@fastify/fast-json-stringify-compiler";

function makeAjv(coerceTypes: boolean | "array") {
  const ajv = new Ajv({
    coerceTypes,
    useDefaults: true,
    // reject unknown fields instead of silently dropping them: no mass assignment, no surprises
    removeAdditional: false,
    allErrors: false,
    strict: false,
  });
  (addFormats as unknown as (a: Ajv) => void)(ajv);
  return ajv;
}

/**
 * Bodies are validated strictly (a number is not a string); query and path parameters arrive as text and are coerced.
 * With onFirstUse each route's validator is compiled when a request first needs it instead of at start-up: the same
 * validator, but an app whose caller reaches a few of its hundreds of routes (a test file) skips compiling the rest.
 */
export function installValidators(app: FastifyInstance, opts: { onFirstUse?: boolean } = {}): void {
  const strict = makeAjv(false);
  const coercing = makeAjv("array");
  const compile = ({ schema, httpPart }: { schema: object; httpPart?: string }) =>
    (httpPart === "body" ? strict : coercing).compile(schema);
  app.setValidatorCompiler(opts.onFirstUse ? (route) => validatorOnFirstUse(() => compile(route)) : compile);
}

/** A validator that compiles on first call; fastify reads `schemaEnv` before and `errors` after each call. */
function validatorOnFirstUse(compile: () => ValidateFunction): ValidateFunction {
  let compiled: ValidateFunction | undefined;
  const get = () => (compiled ??= compile());
  const validate = ((data, dataCtx) => get()(data, dataCtx)) as ValidateFunction;
  Object.defineProperty(validate, "schemaEnv", { get: () => get().schemaEnv });
  Object.defineProperty(validate, "errors", { get: () => get().errors });
  return validate;
}

/**
 * The `schemaController` option for Fastify() that compiles each response serializer on its first answer (fastify's
 * default fast-json-stringify compiler, deferred): see installValidators' onFirstUse.
 */
export function serializersOnFirstUse() {
  const factory = SerializerSelector();
  return {
    compilersFactory: {
      buildSerializer: (...args: Parameters<typeof factory>) => {
        const compile = factory(...args);
        return (route: Parameters<typeof compile>[0]) => {
          let compiled: ((doc: unknown) => string) | undefined;
          return (doc: unknown) => (compiled ??= compile(route))(doc);
        };
      },
    },
  };
}
