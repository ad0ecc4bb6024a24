import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../kernel/context.js";
import { renderManual } from "./manual.js";
import { GpuCatalog, loadGpuCatalog } from "./gpu-catalog.js";
import { route, type Route } from "../http/route.js";

/** Meta endpoints: edition, manual, OpenAPI description, GPU catalog. */
export function metaRoutes(app: FastifyInstance, ctx: AppContext): Route[] {
  const catalog = loadGpuCatalog(ctx.config.gpuCatalogFile);

  return [
    route({
      method: "GET",
      url: "/v1/edition",
      operationId: "getEdition",
      tags: ["meta"],
      summary: "Edition (saas or onprem), base domain, login method.",
      summaryKo: "에디션(saas, onprem), 기본 도메인, 로그인 방식.",
      auth: { public: true },
      response: {
        200: Type.Object({
          edition: Type.Union([Type.Literal("saas"), Type.Literal("onprem")]),
          base_domain: Type.String(),
          login_method: Type.String(),
          license: Type.Optional(
            Type.Object(
              {
                license_id: Type.String(),
                customer: Type.String(),
                hosts: Type.Integer(),
                not_after: Type.String({ format: "date-time" }),
                valid: Type.Boolean(),
              },
              { description: "on-premises edition: the installation's license (LICENSE_FILE), verified at start-up" },
            ),
          ),
        }),
      },
      handler: async () => {
        const license = ctx.kernel.use("editionLicense")?.() ?? null;
        return {
          edition: ctx.config.edition,
          base_domain: ctx.config.baseDomain,
          login_method: "password",
          ...(license ? { license } : {}),
        };
      },
    }),
    route({
      method: "GET",
      url: "/v1/manual",
      operationId: "getManual",
      tags: ["meta"],
      summary: "Plain-text manual for AI agents; ?brief=1 quick start; ?lang=ko Korean.",
      summaryKo: "AI 에이전트용 일반 텍스트 설명서. ?brief=1 빠른 시작, ?lang=ko 한국어.",
      auth: { public: true },
      query: Type.Object({
        brief: Type.Optional(
          Type.Union([Type.Literal("1"), Type.Literal("0"), Type.Literal("true"), Type.Literal("false")]),
        ),
        lang: Type.Optional(Type.Union([Type.Literal("en"), Type.Literal("ko")])),
      }),
      response: {
        200: { description: "The manual, plain text", content: { "text/plain": { schema: Type.String() } } },
      },
      handler: async (request, reply) => {
        const brief = request.query.brief === "1" || request.query.brief === "true";
        const text = renderManual(
          ctx.routeTable,
          { baseDomain: ctx.config.baseDomain, edition: ctx.config.edition },
          { brief, lang: request.query.lang ?? "en" },
        );
        return reply.type("text/plain; charset=utf-8").send(text);
      },
    }),
    route({
      method: "GET",
      url: "/v1/openapi.json",
      // documented like every other route (the spec lists it in the Meta table), so it is not hidden
      operationId: "getOpenApi",
      tags: ["meta"],
      summary: "This interface's machine-readable description (OpenAPI 3.0.3).",
      summaryKo: "이 API의 기계용 설명(OpenAPI 3.0.3).",
      auth: { public: true },
      response: { 200: Type.Object({}, { additionalProperties: true, description: "OpenAPI 3.0.3 document" }) },
      handler: async () => app.swagger(),
    }),
    route({
      method: "GET",
      url: "/v1/gpus",
      operationId: "listGpus",
      tags: ["meta"],
      summary: "Available GPU and CPU SKUs with hourly prices.",
      summaryKo: "사용 가능한 GPU와 CPU 사양 및 시간당 가격.",
      auth: { token: true },
      response: { 200: GpuCatalog },
      handler: async () => catalog,
    }),
  ];
}
