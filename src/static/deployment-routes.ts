import { Type, type Static, type TObject } from "@sinclair/typebox";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { callerOf, type Principal } from "../auth/principal.js";
import type { AuthRule } from "../http/auth-rule.js";
import { ApiError } from "../http/errors.js";
import { Body } from "../http/schemas.js";
import { registerRoutes, route, type Route } from "../http/route.js";
import type { DeploymentRow, SiteRow } from "./service.js";
import { deploymentView } from "./view.js";
import { ARCHIVE_TYPES, Deployment, DeploymentParams, RawUpload, read, SiteParams, tags, write } from "./schemas.js";
import type { StaticRouteDeps } from "./route-deps.js";

/** The API's own address as the caller reached it: upload URLs point back here. */
const apiBase = (request: FastifyRequest) => `${request.protocol}://${request.host}`;

/** Deployments of a site: create (an upload target), upload the archive, finalize, list, read, roll back. */
export async function deploymentRoutes(app: FastifyInstance, { svc, config }: StaticRouteDeps): Promise<Route[]> {
  const view = (request: FastifyRequest, x: { site: SiteRow; deployment: DeploymentRow }) =>
    deploymentView(x.site, x.deployment, {
      apiBase: apiBase(request),
      maxBytes: config.maxBytes,
      maxFiles: config.maxFiles,
    });

  const finalizeRoute = <P extends TObject>({
    finalize,
    ...declared
  }: {
    url: string;
    operationId: string;
    summary: string;
    summaryKo: string;
    auth: AuthRule;
    params: P;
    finalize: (caller: Principal, params: Static<P>) => Promise<{ site: SiteRow; deployment: DeploymentRow }>;
  }) =>
    route({
      ...declared,
      method: "POST",
      tags,
      admits: true,
      errors: ["not_uploaded", "conflict"],
      response: { 200: Deployment },
      handler: async (request) => view(request, await finalize(callerOf(request), request.params as Static<P>)),
    });

  const routes = [
    route({
      method: "POST",
      url: "/v1/static/:slug/deployments",
      operationId: "createStaticDeployment",
      tags,
      summary: "Start a deployment (201): PUT the archive to its upload_url, then finalize it.",
      summaryKo: "배포를 만듭니다: 업로드 주소(upload_url)를 돌려줍니다.",
      auth: write,
      admits: true,
      params: SiteParams,
      response: { 201: Deployment },
      handler: async (request, reply) =>
        reply.code(201).send(view(request, await svc.createDeployment(callerOf(request), request.params.slug))),
    }),
    route({
      method: "GET",
      url: "/v1/static/:slug/deployments",
      operationId: "listStaticDeployments",
      tags,
      summary: "The site's deployments, newest first (at most 100).",
      summaryKo: "사이트의 배포 목록(최근 100개, 최신 순).",
      auth: read,
      params: SiteParams,
      response: { 200: Type.Array(Deployment) },
      handler: async (request) => {
        const { site, deployments } = await svc.listDeployments(callerOf(request), request.params.slug);
        return deployments.map((deployment) => view(request, { site, deployment }));
      },
    }),
    route({
      method: "GET",
      url: "/v1/static/:slug/deployments/:id",
      operationId: "getStaticDeployment",
      tags,
      summary: "One deployment: status, file count, bytes, when it was uploaded and finalized.",
      summaryKo: "배포 하나(상태, 파일 수, 크기).",
      auth: read,
      params: DeploymentParams,
      response: { 200: Deployment },
      handler: async (request) =>
        view(request, await svc.getDeployment(callerOf(request), request.params.slug, request.params.id)),
    }),

    // one finalize, addressed by the site and the deployment, or by the deployment alone
    finalizeRoute({
      url: "/v1/static/:slug/deployments/:id/finalize",
      operationId: "finalizeStaticDeployment",
      summary:
        "Make an uploaded deployment live, atomically: every edge serves it within a second. 409 not_uploaded before its upload; finalizing the live one again answers it unchanged.",
      summaryKo: "업로드된 배포를 원자적으로 라이브로 만듭니다.",
      auth: write,
      params: DeploymentParams,
      finalize: (caller, { slug, id }) => svc.finalize(caller, slug, id),
    }),
    finalizeRoute({
      url: "/v1/static/deployments/:id/finalize",
      operationId: "finalizeStaticDeploymentById",
      summary:
        "Finalize addressed by the deployment id alone; a key limited to static:write:<site slug> covers its site's deployments.",
      summaryKo: "배포 id만으로 라이브로 만듭니다(static:write:<slug> 키로 그 사이트의 배포를 확정).",
      auth: { scope: "static:write", instance: { param: "id" } },
      params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 64, description: "deployment id" }) }),
      finalize: (caller, { id }) => svc.finalizeById(caller, id),
    }),
    route({
      method: "POST",
      url: "/v1/static/:slug/rollback",
      operationId: "rollbackStaticSite",
      tags,
      summary:
        "Make an earlier finalized deployment live again (the last 20 finalized ones are kept); the edge follows within a second.",
      summaryKo: "이전에 확정된 배포를 다시 라이브로 만듭니다.",
      auth: write,
      errors: ["conflict"],
      params: SiteParams,
      body: Body({ deployment_id: Type.String({ minLength: 1, maxLength: 64 }) }),
      response: { 200: Deployment },
      handler: async (request) =>
        view(request, await svc.rollback(callerOf(request), request.params.slug, request.body.deployment_id)),
    }),
  ];

  // the archive is the raw body: handed through as a stream (never parsed as JSON), spooled under the size limit
  await app.register(async (raw) => {
    raw.addContentTypeParser(ARCHIVE_TYPES, (_request, payload, done) => done(null, new RawUpload(payload)));
    // the body's schema documents the media types; the bytes are checked by the upload itself
    const compile = raw.validatorCompiler;
    if (!compile) throw new Error("static upload route: the app's validator compiler is not set");
    raw.setValidatorCompiler((route) => (route.httpPart === "body" ? () => true : compile(route)));
    registerRoutes(raw, [
      route({
        method: "PUT",
        url: "/v1/static/:slug/deployments/:id/files",
        operationId: "uploadStaticFiles",
        tags,
        summary:
          "Upload the deployment's files as one archive in the raw body (tar, tar.gz or zip; told by its first bytes). Refused whole (400 bad_archive, naming the entry) for absolute paths, `..`, links or devices; 413 beyond max_bytes or max_files. One top-level folder holding every file (e.g. dist/) is dropped.",
        summaryKo:
          "배포의 파일을 tar, tar.gz 또는 zip 아카이브 하나로 올립니다(한 번에 모두 기록되거나 전혀 기록되지 않음).",
        auth: write,
        errors: ["conflict", "bad_archive"],
        params: DeploymentParams,
        // the media types only document the raw body (the validator passes it through)
        document: {
          body: {
            content: Object.fromEntries(
              ARCHIVE_TYPES.map((type) => [
                type,
                { schema: { type: "string", format: "binary", maxLength: config.maxBytes } },
              ]),
            ),
          },
        },
        response: { 200: Deployment },
        handler: async (request) => {
          const body: unknown = request.body;
          if (!(body instanceof RawUpload))
            throw new ApiError(
              "unsupported_media_type",
              `Send the archive itself as the body, with Content-Type ${ARCHIVE_TYPES.slice(0, 3).join(", ")} or application/zip.`,
            );
          // a declared length over the limit is refused before a byte is read (node drops the unread rest)
          if (Number(request.headers["content-length"]) > config.maxBytes)
            throw new ApiError("payload_too_large", `The archive is larger than ${config.maxBytes} bytes.`);
          const type = request.headers["content-type"]?.split(";")[0].trim().toLowerCase();
          const { slug, id } = request.params;
          return view(request, await svc.upload(callerOf(request), slug, id, body.stream, type));
        },
      }),
    ]);
  });
  return routes;
}
