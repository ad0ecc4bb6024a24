import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { createHash } from "node:crypto";
import type { Execute } from "@hosting-platform/sdk/mcp";
import type { OpenApiDocument } from "@hosting-platform/sdk";
import { ApiError } from "../http/errors.js";
import { route, type Route } from "../http/route.js";
import type { AppContext } from "../kernel/context.js";
import type { Principal } from "../auth/principal.js";
import { callerOf } from "../auth/principal.js";
import { prices } from "../billing/public.js";
import type { McpState } from "./provider/types.js";

const JsonRpcId = Type.Union([Type.String({ maxLength: 200 }), Type.Integer()]);
const OpenObject = (description: string) => Type.Object({}, { additionalProperties: true, description });
const JsonRpcMessage = Type.Object(
  {
    jsonrpc: Type.Literal("2.0"),
    id: Type.Optional(JsonRpcId),
    method: Type.Optional(Type.String({ maxLength: 200 })),
    params: Type.Optional(OpenObject("the method's parameters")),
    result: Type.Optional(OpenObject("a result (answers to server requests)")),
    error: Type.Optional(OpenObject("an error (answers to server requests)")),
  },
  { additionalProperties: false, description: "One JSON-RPC 2.0 message of the Model Context Protocol" },
);
const JsonRpcAnswer = Type.Object(
  {
    jsonrpc: Type.Literal("2.0"),
    id: Type.Optional(Type.Union([JsonRpcId, Type.Null()])),
    result: Type.Optional(OpenObject("the result")),
    error: Type.Optional(OpenObject("a JSON-RPC error")),
  },
  { description: "The JSON-RPC answer" },
);

/**
 * POST /v1/mcp: Streamable HTTP in stateless mode with JSON answers; each request gets its own MCP
 * server. A tool call is executed by calling this API in-process with the caller's own Authorization
 * header, so authentication, scopes, validation, rate limits and audit apply exactly as on REST: a
 * refusal there (403 scope_insufficient) comes back as a tool error.
 */
/**
 * Read-only mode: asked for by the `X-MCP-Read-Only: 1` header, or implied by a scoped key that holds no write
 * scope (it could not change anything anyway, so the write tools would only fail).
 */
function readOnlyOf(header: unknown, principal: Principal | null): boolean {
  if (header === "1" || header === "true") return true;
  return !!principal && principal.kind === "scoped" && !principal.grants.some((g) => g.action !== "read");
}

const SqlBody = Type.Object(
  { sql: Type.String({ minLength: 1, maxLength: 100_000, description: "the SQL to run" }) },
  { additionalProperties: false },
);
const SqlAnswer = Type.Object(
  {
    command: Type.Union([Type.String(), Type.Null()]),
    row_count: Type.Union([Type.Integer(), Type.Null()]),
    columns: Type.Array(Type.String()),
    rows: Type.Array(Type.Object({}, { additionalProperties: true })),
    truncated: Type.Boolean(),
    elapsed_ms: Type.Integer(),
  },
  { description: "The last statement's rows (at most 500, 64 KiB) and what it did" },
);

export function mcpRoutes(app: FastifyInstance, ctx: AppContext, state: McpState): Route[] {
  const confirmKey = ctx.secrets.derive("mcp.confirmations");
  // run_sql's two routes: the MCP tools call them (hidden from the document, like the console's own routes);
  // reading needs databases:read, changing databases:write, both for the instance named
  const sqlRoute = (write: boolean): Route =>
    route({
      method: "POST",
      url: `/v1/mcp/databases/:id/${write ? "sql-write" : "sql"}`,
      hide: true,
      tags: ["mcp"],
      summary: write
        ? "run_sql with write: the statements in one transaction as the owner role."
        : "run_sql: one statement in a READ ONLY transaction as the owner role.",
      auth: { scope: write ? "databases:write" : "databases:read", instance: { param: "id" } },
      params: Type.Object({ id: Type.String({ maxLength: 100 }) }),
      body: SqlBody,
      response: { 200: SqlAnswer },
      handler: async (request) => state.sql.run(callerOf(request).owner, request.params.id, request.body.sql, write),
    });
  return [
    sqlRoute(false),
    sqlRoute(true),
    route({
      method: "GET",
      url: "/v1/mcp/prices",
      hide: true,
      tags: ["mcp"],
      summary: "The price catalog, for the tools' cost confirmation.",
      auth: { token: true },
      response: { 200: Type.Object({}, { additionalProperties: true }) },
      handler: async () => prices(),
    }),
    route({
      method: "POST",
      url: "/v1/mcp",
      operationId: "mcp",
      tags: ["mcp"],
      summary:
        "Model Context Protocol over Streamable HTTP (stateless, JSON answers): tools per area and call_operation, the manual as a resource; tools run with the caller's token and scopes.",
      summaryKo: "AI 에이전트용 MCP 엔드포인트(Streamable HTTP): API 작업을 호출자 토큰으로 도구로 제공.",
      auth: { token: true },
      body: JsonRpcMessage,
      response: { 200: JsonRpcAnswer, 202: Type.Null({ description: "A notification or answer was accepted" }) },
      handler: async (request, reply) => {
        const authorization = request.headers.authorization ?? "";
        // the caller's owner context (X-Owner: org) applies to every call its tools make
        const owner = typeof request.headers["x-owner"] === "string" ? { "x-owner": request.headers["x-owner"] } : {};
        const execute: Execute = async (call) => {
          const query = new URLSearchParams();
          for (const [k, v] of Object.entries(call.query))
            for (const item of Array.isArray(v) ? v : [v]) query.append(k, String(item));
          const qs = query.toString();
          const res = await app.inject({
            method: call.method as "GET",
            url: qs ? `${call.path}?${qs}` : call.path,
            headers: {
              authorization,
              ...owner,
              ...(call.body !== undefined ? { "content-type": call.contentType ?? "application/json" } : {}),
            },
            payload:
              call.body === undefined
                ? undefined
                : call.body instanceof Uint8Array
                  ? Buffer.from(call.body)
                  : JSON.stringify(call.body),
          });
          const type = String(res.headers["content-type"] ?? "");
          let body: unknown = res.body;
          if (type.includes("json") && res.body) body = JSON.parse(res.body);
          return { status: res.statusCode, body };
        };
        // the MCP SDK (and its zod) load on the first MCP request: most processes never serve one
        const [{ createPlatformMcpServer }, { WebStandardStreamableHTTPServerTransport }] = await Promise.all([
          import("@hosting-platform/sdk/mcp"),
          import("@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"),
        ]);
        const server = createPlatformMcpServer({
          document: app.swagger() as unknown as OpenApiDocument,
          execute,
          readOnly: readOnlyOf(request.headers["x-mcp-read-only"], request.principal),
          confirmKey,
          caller: createHash("sha256").update(callerOf(request).tokenId).digest("hex"),
        });
        const transport = new WebStandardStreamableHTTPServerTransport({
          sessionIdGenerator: undefined,
          enableJsonResponse: true,
        });
        await server.connect(transport);
        try {
          const headers = new Headers({
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
          });
          const version = request.headers["mcp-protocol-version"];
          if (typeof version === "string") headers.set("mcp-protocol-version", version);
          const answer = await transport.handleRequest(
            new Request(`http://platform${request.url}`, {
              method: "POST",
              headers,
              body: JSON.stringify(request.body),
            }),
            { parsedBody: request.body },
          );
          if (answer.status === 202) return reply.code(202).send(null);
          const text = await answer.text();
          if (!answer.ok) {
            // the transport's own refusals (bad protocol version, not a JSON-RPC message) in the one error body
            let message = `The MCP request was refused (HTTP ${answer.status}).`;
            try {
              message = (JSON.parse(text) as { error?: { message?: string } }).error?.message ?? message;
            } catch {
              // keep the status line
            }
            throw new ApiError("invalid_request", message);
          }
          return reply.code(200).send(JSON.parse(text));
        } finally {
          await transport.close();
          await server.close();
        }
      },
    }),
  ];
}
