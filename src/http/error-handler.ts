import { STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { ApiError, asApiError, type ErrorCode } from "./errors.js";

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
    return {
      field: [field, extra].filter(Boolean).join("."),
      message: `${context} field "${[field, extra].filter(Boolean).join(".")}" is not allowed`,
    };
  }
  const where = field ? `${context} field "${field}"` : context;
  return {
    field,
    message: `${where} ${issue.keyword === "required" ? "is required" : (issue.message ?? "is invalid")}`,
  };
}

/** Turns any thrown error into the spec's error body; internals of server errors never leave the process. */
export function toErrorResponse(
  err: FastifyError | Error,
  request: FastifyRequest,
): { status: number; code: string; message: string; headers: Record<string, string> } {
  const api = asApiError(err);
  if (api) return { status: api.status, code: api.code, message: api.message, headers: api.headers };
  const fe = err as FastifyError & { validation?: ValidationIssue[]; validationContext?: string };
  if (fe.validation && fe.validation.length) {
    const context = fe.validationContext ?? "request";
    const issue = describeIssue(context, fe.validation[0]);
    const codes = request.routeOptions?.config?.validationCodes ?? {};
    // the field's whole path (a nested "/pod/name"), else its top-level field
    const code =
      codes[`/${issue.field.replace(/\./g, "/")}`] ?? codes[`/${issue.field.split(".")[0]}`] ?? "invalid_request";
    return { status: 400, code, message: `${issue.message}.`, headers: {} };
  }
  switch (fe.code) {
    case "FST_ERR_CTP_INVALID_JSON_BODY":
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return { status: 400, code: "bad_json", message: "The request body is not valid JSON.", headers: {} };
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return {
        status: 413,
        code: "payload_too_large",
        message: "The request body is larger than this endpoint accepts.",
        headers: {},
      };
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return {
        status: 415,
        code: "unsupported_media_type",
        message: "Send the request body as application/json.",
        headers: {},
      };
    case "FST_ERR_CTP_INVALID_CONTENT_LENGTH":
      return {
        status: 400,
        code: "invalid_request",
        message: "The Content-Length header does not match the body.",
        headers: {},
      };
  }
  if (err instanceof SyntaxError && fe.statusCode === 400) {
    return { status: 400, code: "bad_json", message: "The request body is not valid JSON.", headers: {} };
  }
  if (fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) {
    return { status: fe.statusCode, code: "invalid_request", message: fe.message, headers: {} };
  }
  return {
    status: 500,
    code: "internal",
    message: "Something went wrong on our side; the request id identifies it in our logs.",
    headers: {},
  };
}

export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const res = toErrorResponse(err, request);
    if (res.status >= 500) request.log.error({ err }, "request failed");
    reply
      .code(res.status)
      .headers(res.headers)
      .send({ error: { code: res.code, message: res.message } });
  });
  app.setNotFoundHandler((request, reply) => {
    reply
      .code(404)
      .send({ error: { code: "not_found", message: `No route ${request.method} ${request.url.split("?")[0]}.` } });
  });
}

/**
 * Errors Fastify's router raises before any hook runs (options.frameworkErrors): they get the one
 * error body like everything else. A path parameter that is not valid percent-encoded UTF-8 names
 * no resource (404); one longer than maxParamLength is 414.
 */
export function frameworkErrors(err: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  reply.header("x-request-id", request.id);
  let res: { status: number; code: string; message: string; headers: Record<string, string> };
  if (err.code === "FST_ERR_BAD_URL") {
    res = {
      status: 404,
      code: "not_found",
      message: "No such resource: the path is not valid percent-encoded UTF-8.",
      headers: {},
    };
  } else if (err.code === "FST_ERR_MAX_PARAM_LENGTH") {
    res = {
      status: 414,
      code: "uri_too_long",
      message: "A path parameter is longer than any identifier of this API.",
      headers: {},
    };
  } else {
    res = toErrorResponse(err, request);
    if (res.status >= 500) request.log.error({ err }, "request failed");
  }
  reply
    .code(res.status)
    .headers(res.headers)
    .send({ error: { code: res.code, message: res.message } });
}

/**
 * Errors of the HTTP parser and the server's timeouts, raised before Fastify sees a request
 * (server "clientError"): headers too large 431, slow or unfinished requests 408, anything
 * else that is not HTTP 400. The connection is closed after the answer.
 */
export function clientErrorHandler(this: FastifyInstance, err: Error & { code?: string }, socket: Socket): void {
  if (err.code === "ECONNRESET" || socket.destroyed) return;
  const [code, message]: [ErrorCode, string] =
    err.code === "ERR_HTTP_REQUEST_TIMEOUT"
      ? ["request_timeout", "The request was not received in time."]
      : err.code === "HPE_HEADER_OVERFLOW"
        ? ["headers_too_large", "The request line and headers are larger than this server accepts."]
        : ["invalid_request", "The request is not valid HTTP/1.1."];
  const status = new ApiError(code).status;
  const body = JSON.stringify({ error: { code, message } });
  this.log.debug({ err }, "client error");
  const started = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent;
  if (socket.writable && !started) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(err);
}
