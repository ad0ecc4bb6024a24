import { Ajv } from "ajv";
import addFormats from "ajv-formats";
import type { FastifyInstance } from "fastify";

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

/** Bodies are validated strictly (a number is not a string); query and path parameters arrive as text and are coerced. */
export function installValidators(app: FastifyInstance): void {
  const strict = makeAjv(false);
  const coercing = makeAjv("array");
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === "body" ? strict : coercing).compile(schema));
}
