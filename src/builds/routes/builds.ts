import { Type } from "@sinclair/typebox";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { callerOf } from "../../auth/principal.js";
import { Body } from "../../http/schemas.js";
import { registerRoutes, route, type Route } from "../../http/route.js";
import type { BuildsService } from "../service.js";
import { BuildEventBody, CreateBuildBody } from "../inputs.js";
import type { BuildsConfig } from "../config.js";
import { buildDetailView, buildView, eventView } from "../view.js";
import { Build, BuildDetail, Created, Event, Params, read, tags, write } from "./schemas.js";

/** Builds: create (with the upload URL), list, read with logs, start, cancel, client events. */
export async function buildRoutes(app: FastifyInstance, svc: BuildsService, config: BuildsConfig): Promise<Route[]> {
  const uploadUrl = (request: FastifyRequest, id: string, token: string) =>
    `${config.uploadBaseUrl ?? `${request.protocol}://${request.host}`}/v1/builds/${id}/source?token=${token}`;

  const routes = [
    route({
      method: "POST",
      url: "/v1/builds",
      operationId: "createBuild",
      tags,
      summary:
        "Create an image build; 201 with `upload_url`, where the source archive (tar.gz) is PUT once before it expires, then POST .../start. With `app` (a pod or pod group, id or slug) the app is rolled to the image once it is pushed; that needs pods:write for the app beside builds:write.",
      summaryKo:
        "이미지 빌드를 만듭니다. 응답의 upload_url로 소스(tar.gz)를 올린 뒤 start 하세요. app을 주면 빌드된 이미지로 그 앱을 롤링 업데이트합니다.",
      auth: { scope: "builds:write", instance: "create" },
      admits: true,
      errors: ["not_found", "builder_unavailable", "registry_unavailable", "host_unavailable"],
      body: CreateBuildBody,
      response: { 201: Created },
      handler: async (request, reply) => {
        const { row, token } = await svc.create(callerOf(request), request.body);
        return reply.code(201).send({ ...buildView(row), upload_url: uploadUrl(request, row.id, token) });
      },
    }),
    route({
      method: "GET",
      url: "/v1/builds",
      operationId: "listBuilds",
      tags,
      summary: "The caller's builds, newest first, without logs (?limit=N, default 50).",
      summaryKo: "빌드 목록(최신 순).",
      auth: { scope: "builds:read", instance: "list" },
      query: Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })) }),
      response: { 200: Type.Array(Build) },
      handler: async (request) =>
        (await svc.list(callerOf(request), request.instanceFilter, request.query.limit ?? 50)).map(buildView),
    }),
    route({
      method: "GET",
      url: "/v1/builds/:id",
      operationId: "getBuild",
      tags,
      summary:
        "One build: status (awaiting_upload, queued, building, succeeded, failed, cancelled), the builder's log, the image reference and digest, client events.",
      summaryKo: "빌드 상태, 로그, 이미지 참조와 다이제스트.",
      auth: read,
      params: Params,
      response: { 200: BuildDetail },
      handler: async (request) => {
        const row = await svc.get(callerOf(request), request.params.id);
        return buildDetailView(row, await svc.events(row));
      },
    }),
    route({
      method: "POST",
      url: "/v1/builds/:id/start",
      operationId: "startBuild",
      tags,
      summary:
        "Start a build whose source was uploaded: 202, queued on its host (BUILD_CONCURRENCY builds run at once per host).",
      summaryKo: "소스를 올린 빌드를 시작합니다(호스트의 빌드 대기열에 들어갑니다).",
      auth: write,
      errors: ["conflict", "builder_unavailable", "registry_unavailable"],
      params: Params,
      response: { 202: Build },
      handler: async (request, reply) =>
        reply.code(202).send(buildView(await svc.start(callerOf(request), request.params.id))),
    }),
    route({
      method: "POST",
      url: "/v1/builds/:id/cancel",
      operationId: "cancelBuild",
      tags,
      summary:
        "Cancel a build that has not ended: a running build's processes are killed at once; the optional reason, phase and detail are recorded.",
      summaryKo: "빌드를 즉시 멈추고 이유를 기록합니다.",
      auth: write,
      errors: ["conflict"],
      params: Params,
      body: Body({
        reason: Type.Optional(Type.String({ maxLength: 1000 })),
        phase: Type.Optional(Type.String({ maxLength: 100 })),
        detail: Type.Optional(Type.Unknown({ description: "any JSON the client wants kept with the cancel" })),
      }),
      response: { 200: Build },
      handler: async (request) => buildView(await svc.cancel(callerOf(request), request.params.id, request.body)),
    }),
    route({
      method: "POST",
      url: "/v1/builds/:id/events",
      operationId: "recordBuildEvent",
      tags,
      summary:
        "Record a client-side build or deploy step (packing, uploading, deploying...) for diagnostics; shown in GET /v1/builds/{id}.",
      summaryKo: "클라이언트 쪽 빌드·배포 단계를 진단용으로 기록합니다.",
      auth: write,
      params: Params,
      body: BuildEventBody,
      response: { 201: Event },
      handler: async (request, reply) =>
        reply.code(201).send(eventView(await svc.addEvent(callerOf(request), request.params.id, request.body))),
    }),
  ];

  // the upload: raw bytes, not JSON; this route alone reads the request stream itself
  await app.register(async (raw) => {
    raw.removeAllContentTypeParsers();
    raw.addContentTypeParser("*", (_request, _payload, done) => done(null));
    registerRoutes(raw, [
      route({
        method: "PUT",
        url: "/v1/builds/:id/source",
        operationId: "uploadBuildSource",
        tags,
        summary:
          "The upload_url of a build: the raw tar.gz archive as the body (`curl -T src.tar.gz '<upload_url>'`), authenticated by the single-use token in the URL, at most BUILD_MAX_SOURCE_MB; paths leaving the archive are refused.",
        summaryKo: "upload_url: 빌드 소스(tar.gz)를 한 번 올립니다(토큰이 주소에 있어 curl -T 로 충분).",
        auth: { public: true },
        errors: ["auth_required", "conflict", "host_unavailable"],
        params: Params,
        query: Type.Object({ token: Type.String({ minLength: 1, maxLength: 200 }) }),
        response: { 200: Build },
        handler: async (request) => buildView(await svc.upload(request.params.id, request.query.token, request.raw)),
      }),
    ]);
  });
  return routes;
}
