import { Type } from "@sinclair/typebox";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { callerOf } from "../../auth/principal.js";
import { Body, Timestamp } from "../../http/schemas.js";
import type { ReleasesService } from "../releases-service.js";
import { account, IdParams, open, Release, releaseView, ScopeField, tags } from "./schemas.js";

/** Latest (public), the list, signed download addresses and the bytes behind them. */
export function releaseRoutes(
  app: FastifyInstance,
  svc: { releases: ReleasesService },
  opts: { downloadBaseUrl: string | null },
): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const base = (request: FastifyRequest) => opts.downloadBaseUrl ?? `${request.protocol}://${request.host}`;

  r.get(
    "/v1/onprem/latest",
    {
      config: { auth: open, errors: [], summaryKo: "공개: 아키텍처별 최신 릴리스." },
      schema: {
        operationId: "getOnpremLatest",
        tags,
        summary: "Public (no token). The latest published release of each architecture.",
        response: { 200: Type.Array(Release) },
      },
    },
    async () => (await svc.releases.latest()).map(releaseView),
  );

  r.get(
    "/v1/onprem/releases",
    {
      config: { auth: account, errors: [], summaryKo: "내려받을 수 있는 번들(버전, 아키텍처, 크기, SHA256)." },
      schema: {
        operationId: "listOnpremReleases",
        tags,
        summary: "Downloadable bundles, newest first: version, architecture, size, SHA-256.",
        response: { 200: Type.Array(Release) },
      },
    },
    async () => (await svc.releases.list()).map(releaseView),
  );

  r.post(
    "/v1/onprem/releases/:id/download",
    {
      config: {
        auth: account,
        errors: ["not_found", "onprem_approval_required", "terms_required"],
        summaryKo: "1시간 유효한 내려받기 주소(승인과 약관 동의 후).",
      },
      schema: {
        operationId: "downloadOnpremRelease",
        tags,
        summary:
          "A download address valid one hour (an expired or altered one answers 403 download_expired). Needs the owner's approval (403 onprem_approval_required) and the caller's acceptance of the current terms (412 terms_required); scope org: any member of an approved organization.",
        params: IdParams,
        body: Body({ scope: Type.Optional(ScopeField) }),
        response: {
          200: Type.Object({ url: Type.String(), expires_at: Timestamp, release: Release }),
        },
      },
    },
    async (request) => {
      const d = await svc.releases.download(
        callerOf(request),
        request.params.id,
        request.body?.scope ?? "me",
        base(request),
      );
      return { url: d.url, expires_at: d.expires_at.toISOString(), release: releaseView(d.release) };
    },
  );

  r.get(
    "/v1/onprem/releases/:id/file",
    {
      config: {
        auth: open,
        errors: ["not_found", "download_expired"],
        summaryKo: "서명된 내려받기 주소: 번들 파일(만료되었거나 변조되면 403).",
      },
      schema: {
        operationId: "getOnpremReleaseFile",
        tags,
        summary:
          "The address POST /v1/onprem/releases/{id}/download returned: the bundle's bytes (their SHA-256 is the release's). Expired or altered: 403 download_expired.",
        params: IdParams,
        querystring: Type.Object({
          expires: Type.Integer({ minimum: 0, maximum: 1e11 }),
          sig: Type.String({ minLength: 1, maxLength: 100 }),
        }),
        response: {
          200: {
            description: "The bundle",
            content: { "application/octet-stream": { schema: Type.String({ format: "binary" }) } },
          },
        },
      },
    },
    async (request, reply) => {
      const { release, stream } = await svc.releases.open(request.params.id, request.query.expires, request.query.sig);
      return reply
        .type("application/octet-stream")
        .header("content-length", String(release.size))
        .header("content-disposition", `attachment; filename="${release.filename}"`)
        .header("x-content-sha256", release.sha256)
        .send(stream as never);
    },
  );
}
