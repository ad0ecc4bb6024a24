import { Type, type TSchema } from "@sinclair/typebox";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { callerOf, type Principal } from "../auth/principal.js";
import { ApiError } from "../http/errors.js";
import { Body } from "../http/schemas.js";
import { registerRoutes, route, type Route, type RouteDeclaration, type RouteRequest } from "../http/route.js";
import type { DeploymentRow, SiteRow } from "./service.js";
import { deploymentView } from "./view.js";
import { ARCHIVE_TYPES, Deployment, DeploymentParams, RawUpload, read, SiteParams, tags, write } from "./schemas.js";
import type { StaticRouteDeps } from "./route-deps.js";

type SiteDeployment = { site: SiteRow; deployment: DeploymentRow };

/** The API's own address as the caller reached it: upload URLs point back here. */
const apiBase = (request: FastifyRequest) => `${request.protocol}://${request.host}`;

/** Deployments of a site: create (an upload target), upload the archive, finalize, list, read, roll back. */
export async function deploymentRoutes(app: FastifyInstance, { svc, config }: StaticRouteDeps): Promise<Route[]> {
  const view = (request: FastifyRequest, x: SiteDeployment) =>
    deploymentView(x.site, x.deployment, {
      apiBase: apiBase(request),
      maxBytes: config.maxBytes,
      maxFiles: config.maxFiles,
    });

  /** A route answering one deployment in its view (201 when it makes one): each route says only how it gets it. */
  const deploymentRoute = <P extends TSchema, B extends TSchema | undefined = undefined>({
    status = 200,
    deployment,
    ...declared
  }: Omit<RouteDeclaration<P, undefined, B>, "tags" | "response" | "handler"> & {
    status?: 200 | 201;
    deployment: (caller: Principal, request: RouteRequest<P, undefined, B>) => Promise<SiteDeployment>;
  }) =>
    route<P, undefined, B>({
      ...declared,
      tags,
      response: { [status]: Deployment },
      handler: async (request, reply) =>
        reply.code(status).send(view(request, await deployment(callerOf(request), request))),
    });

  // what a finalize is, whether addressed by the site and the deployment or by the deployment alone
  const finalizing: Pick<Route, "method" | "admits" | "errors"> = {
    method: "POST",
    admits: true,
    errors: ["not_uploaded", "conflict"],
  };

  const routes = [
    deploymentRoute({
      method: "POST",
      url: "/v1/static/:slug/deployments",
      operationId: "createStaticDeployment",
      summary: "Start a deployment (201): PUT the archive to its upload_url, then finalize it.",
      summaryKo: "배포를 만듭니다: 업로드 주소(upload_url)를 돌려줍니다.",
      auth: write,
      admits: true,
      params: SiteParams,
      status: 201,
      deployment: (caller, { params }) => svc.createDeployment(caller, params.slug),
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
    deploymentRoute({
      method: "GET",
      url: "/v1/static/:slug/deployments/:id",
      operationId: "getStaticDeployment",
      summary: "One deployment: status, file count, bytes, when it was uploaded and finalized.",
      summaryKo: "배포 하나(상태, 파일 수, 크기).",
      auth: read,
      params: DeploymentParams,
      deployment: (caller, { params }) => svc.getDeployment(caller, params.slug, params.id),
    }),

    // one finalize, addressed by the site and the deployment, or by the deployment alone
    deploymentRoute({
      ...finalizing,
      url: "/v1/static/:slug/deployments/:id/finalize",
      operationId: "finalizeStaticDeployment",
      summary:
        "Make an uploaded deployment live, atomically: every edge serves it within a second. 409 not_uploaded before its upload; finalizing the live one again answers it unchanged.",
      summaryKo: "업로드된 배포를 원자적으로 라이브로 만듭니다.",
      auth: write,
      params: DeploymentParams,
      deployment: (caller, { params }) => svc.finalize(caller, params.slug, params.id),
    }),
    deploymentRoute({
      ...finalizing,
      url: "/v1/static/deployments/:id/finalize",
      operationId: "finalizeStaticDeploymentById",
      summary:
        "Finalize addressed by the deployment id alone; a key limited to static:write:<site slug> covers its site's deployments.",
      summaryKo: "배포 id만으로 라이브로 만듭니다(static:write:<slug> 키로 그 사이트의 배포를 확정).",
      auth: { scope: "static:write", instance: { param: "id" } },
      params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 64, description: "deployment id" }) }),
      deployment: (caller, { params }) => svc.finalizeById(caller, params.id),
    }),
    deploymentRoute({
      method: "POST",
      url: "/v1/static/:slug/rollback",
      operationId: "rollbackStaticSite",
      summary:
        "Make an earlier finalized deployment live again (the last 20 finalized ones are kept); the edge follows within a second.",
      summaryKo: "이전에 확정된 배포를 다시 라이브로 만듭니다.",
      auth: write,
      errors: ["conflict"],
      params: SiteParams,
      body: Body({ deployment_id: Type.String({ minLength: 1, maxLength: 64 }) }),
      deployment: (caller, { params, body }) => svc.rollback(caller, params.slug, body.deployment_id),
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
      deploymentRoute({
        method: "PUT",
        url: "/v1/static/:slug/deployments/:id/files",
        operationId: "uploadStaticFiles",
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
        deployment: async (caller, request) => {
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
          return svc.upload(caller, slug, id, body.stream, type);
        },
      }),
    ]);
  });
  return routes;
}
