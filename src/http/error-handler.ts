import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { asApiError } from "./errors.js";

export const ErrorBodySchema = {
  type: "object",
  required: ["error"],
  properties: {
    error: {
      type: "object",
      required: ["code", "message"],
      properties: { code: { type: "string" }, message: { type: "string" } },
    },
  },
} as const;

interface ValidationIssue {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

function describeIssue(context: string, issue: ValidationIssue): { field: string; message: string } {
  let field = issue.instancePath.replace(/^\//, "").replace(/\//g, ".");
  if (issue.keyword === "required") field = [field, String(issue.params.missingProperty)].filter(Boolean).join(".");
  if (issue.keyword === "additionalProperties") {
    const extra = String(issue.params.additionalProperty);
    return { field: [field, extra].filter(Boolean).join("."), message: `${context} field "${[field, extra].filter(Boolean).join(".")}" is not allowed` };
  }
  const where = field ? `${context} field "${field}"` : context;
  return { field, message: `${where} ${issue.keyword === "required" ? "is required" : issue.message ?? "is invalid"}` };
}

/** Turns any thrown error into the spec's error body; internals of server errors never leave the process. */
export function toErrorResponse(err: FastifyError | Error, request: FastifyRequest): { status: number; code: string; message: string; headers: Record<string, string> } {
  const api = asApiError(err);
  if (api) return { status: api.status, code: api.code, message: api.message, headers: api.headers };
  const fe = err as FastifyError & { validation?: ValidationIssue[]; validationContext?: string };
  if (fe.validation && fe.validation.length) {
    const context = fe.validationContext ?? "request";
    const issue = describeIssue(context, fe.validation[0]);
    const codes = request.routeOptions?.config?.validationCodes ?? {};
    const code = codes[`/${issue.field.split(".")[0]}`] ?? "invalid_request";
    return { status: 400, code, message: `${issue.message}.`, headers: {} };
  }
  switch (fe.code) {
    case "FST_ERR_CTP_INVALID_JSON_BODY":
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return { status: 400, code: "bad_json", message: "The request body is not valid JSON.", headers: {} };
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return { status: 413, code: "payload_too_large", message: "The request body is larger than this endpoint accepts.", headers: {} };
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return { status: 415, code: "unsupported_media_type", message: "Send the request body as application/json.", headers: {} };
    case "FST_ERR_CTP_INVALID_CONTENT_LENGTH":
      return { status: 400, code: "invalid_request", message: "The Content-Length header does not match the body.", headers: {} };
  }
  if (err instanceof SyntaxError && fe.statusCode === 400) {
    return { status: 400, code: "bad_json", message: "The request body is not valid JSON.", headers: {} };
  }
  if (fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) {
    return { status: fe.statusCode, code: "invalid_request", message: fe.message, headers: {} };
  }
  return { status: 500, code: "internal", message: "Something went wrong on our side; the request id identifies it in our logs.", headers: {} };
}

export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const res = toErrorResponse(err, request);
    if (res.status >= 500) request.log.error({ err }, "request failed");
    reply.code(res.status).headers(res.headers).send({ error: { code: res.code, message: res.message } });
  });
  app.setNotFoundHandler((request, reply) => {
    reply.code(404).send({ error: { code: "not_found", message: `No route ${request.method} ${request.url.split("?")[0]}.` } });
  });
}
