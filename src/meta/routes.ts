import { Type } from "@sinclair/typebox";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../kernel/context.js";
import { renderManual } from "./manual.js";
import { GpuCatalog, loadGpuCatalog } from "./gpu-catalog.js";

/** Meta endpoints: edition, manual, OpenAPI description, GPU catalog. */
export async function metaRoutes(app: FastifyInstance, ctx: AppContext) {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const catalog = loadGpuCatalog(ctx.config.gpuCatalogFile);

  r.get(
    "/v1/edition",
    {
      config: { auth: { public: true }, errors: [], summaryKo: "에디션(saas, onprem), 기본 도메인, 로그인 방식." },
      schema: {
        operationId: "getEdition",
        tags: ["meta"],
        summary: "Edition (saas or onprem), base domain, login method.",
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
      },
    },
    async () => {
      const license = ctx.kernel.use("editionLicense")?.() ?? null;
      return {
        edition: ctx.config.edition,
        base_domain: ctx.config.baseDomain,
        login_method: "password",
        ...(license ? { license } : {}),
      };
    },
  );

  r.get(
    "/v1/manual",
    {
      config: {
        auth: { public: true },
        errors: [],
        summaryKo: "AI 에이전트용 일반 텍스트 설명서. ?brief=1 빠른 시작, ?lang=ko 한국어.",
      },
      schema: {
        operationId: "getManual",
        tags: ["meta"],
        summary: "Plain-text manual for AI agents; ?brief=1 quick start; ?lang=ko Korean.",
        querystring: Type.Object({
          brief: Type.Optional(
            Type.Union([Type.Literal("1"), Type.Literal("0"), Type.Literal("true"), Type.Literal("false")]),
          ),
          lang: Type.Optional(Type.Union([Type.Literal("en"), Type.Literal("ko")])),
        }),
        response: {
          200: { description: "The manual, plain text", content: { "text/plain": { schema: Type.String() } } },
        },
      },
    },
    async (request, reply) => {
      const brief = request.query.brief === "1" || request.query.brief === "true";
      const text = renderManual(
        ctx.routeTable,
        { baseDomain: ctx.config.baseDomain, edition: ctx.config.edition },
        { brief, lang: request.query.lang ?? "en" },
      );
      return reply.type("text/plain; charset=utf-8").send(text);
    },
  );

  r.get(
    "/v1/openapi.json",
    {
      config: { auth: { public: true }, errors: [], summaryKo: "이 API의 기계용 설명(OpenAPI 3.0.3)." },
      // documented like every other route (the spec lists it in the Meta table), so it is not hidden
      schema: {
        operationId: "getOpenApi",
        tags: ["meta"],
        summary: "This interface's machine-readable description (OpenAPI 3.0.3).",
        response: { 200: Type.Object({}, { additionalProperties: true, description: "OpenAPI 3.0.3 document" }) },
      },
    },
    async () => app.swagger(),
  );

  r.get(
    "/v1/gpus",
    {
      config: { auth: { token: true }, errors: [], summaryKo: "사용 가능한 GPU와 CPU 사양 및 시간당 가격." },
      schema: {
        operationId: "listGpus",
        tags: ["meta"],
        summary: "Available GPU and CPU SKUs with hourly prices.",
        response: { 200: GpuCatalog },
      },
    },
    async () => catalog,
  );
}
