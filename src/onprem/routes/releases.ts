import { Type } from "@sinclair/typebox";
import type { FastifyRequest } from "fastify";
import { callerOf } from "../../auth/principal.js";
import { Body, Timestamp } from "../../http/schemas.js";
import type { ReleasesService } from "../releases-service.js";
import { account, IdParams, open, Release, releaseView, ScopeField, tags } from "./schemas.js";
import { route, type Route } from "../../http/route.js";

/** Latest (public), the list, signed download addresses and the bytes behind them. */
export function releaseRoutes(svc: { releases: ReleasesService }, opts: { downloadBaseUrl: string | null }): Route[] {
  const base = (request: FastifyRequest) => opts.downloadBaseUrl ?? `${request.protocol}://${request.host}`;

  return [
    route({
      method: "GET",
      url: "/v1/onprem/latest",
      operationId: "getOnpremLatest",
      tags,
      summary: "Public (no token). The latest published release of each architecture.",
      summaryKo: "공개: 아키텍처별 최신 릴리스.",
      auth: open,
      response: { 200: Type.Array(Release) },
      handler: async () => (await svc.releases.latest()).map(releaseView),
    }),
    route({
      method: "GET",
      url: "/v1/onprem/releases",
      operationId: "listOnpremReleases",
      tags,
      summary: "Downloadable bundles, newest first: version, architecture, size, SHA-256.",
      summaryKo: "내려받을 수 있는 번들(버전, 아키텍처, 크기, SHA256).",
      auth: account,
      response: { 200: Type.Array(Release) },
      handler: async () => (await svc.releases.list()).map(releaseView),
    }),
    route({
      method: "POST",
      url: "/v1/onprem/releases/:id/download",
      operationId: "downloadOnpremRelease",
      tags,
      summary:
        "A download address valid one hour (an expired or altered one answers 403 download_expired). Needs the owner's approval (403 onprem_approval_required) and the caller's acceptance of the current terms (412 terms_required); scope org: any member of an approved organization.",
      summaryKo: "1시간 유효한 내려받기 주소(승인과 약관 동의 후).",
      auth: account,
      errors: ["onprem_approval_required", "terms_required"],
      params: IdParams,
      body: Body({ scope: Type.Optional(ScopeField) }),
      response: {
        200: Type.Object({ url: Type.String(), expires_at: Timestamp, release: Release }),
      },
      handler: async (request) => {
        const d = await svc.releases.download(
          callerOf(request),
          request.params.id,
          request.body?.scope ?? "me",
          base(request),
        );
        return { url: d.url, expires_at: d.expires_at.toISOString(), release: releaseView(d.release) };
      },
    }),
    route({
      method: "GET",
      url: "/v1/onprem/releases/:id/file",
      operationId: "getOnpremReleaseFile",
      tags,
      summary:
        "The address POST /v1/onprem/releases/{id}/download returned: the bundle's bytes (their SHA-256 is the release's). Expired or altered: 403 download_expired.",
      summaryKo: "서명된 내려받기 주소: 번들 파일(만료되었거나 변조되면 403).",
      auth: open,
      errors: ["download_expired"],
      params: IdParams,
      query: Type.Object({
        expires: Type.Integer({ minimum: 0, maximum: 1e11 }),
        sig: Type.String({ minLength: 1, maxLength: 100 }),
      }),
      response: {
        200: {
          description: "The bundle",
          content: { "application/octet-stream": { schema: Type.String({ format: "binary" }) } },
        },
      },
      handler: async (request, reply) => {
        const { release, stream } = await svc.releases.open(
          request.params.id,
          request.query.expires,
          request.query.sig,
        );
        return reply
          .type("application/octet-stream")
          .header("content-length", String(release.size))
          .header("content-disposition", `attachment; filename="${release.filename}"`)
          .header("x-content-sha256", release.sha256)
          .send(stream as never);
      },
    }),
  ];
}
