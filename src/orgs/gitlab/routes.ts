import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { callerOf } from "../../auth/principal.js";
import { IdParams, orgOf, read, tags, write } from "../public.js";
import { Integration, integrationView, PutBody, Sync, SyncsQuery, syncView, TestBody, TestResult } from "./schemas.js";
import type { GitlabService } from "./service.js";
import { registerRoutes, route, type Route } from "../../http/route.js";

const URL = "/v1/org/integrations/gitlab";

/** The GitLab integration and its syncs (README, "GitLab integration and syncs"); every row is admin. */
export function gitlabRoutes(app: FastifyInstance, svc: GitlabService): void {
  const routes: Route[] = [];

  routes.push(
    route({
      method: "GET",
      url: URL,
      operationId: "getOrgGitlab",
      tags,
      summary: "The GitLab integration (admin): instance, group, archive and GitOps settings; the token masked.",
      summaryKo: "GitLab 연동 설정(관리자). 토큰은 가려서 보여 줍니다.",
      auth: read,
      orgRole: "admin",
      response: { 200: Integration },
      handler: async (request) => {
        const { settings, token } = await svc.get(orgOf(request));
        return integrationView(settings, token);
      },
    }),
  );

  routes.push(
    route({
      method: "PUT",
      url: URL,
      operationId: "putOrgGitlab",
      tags,
      summary:
        "Set the GitLab integration (admin). An omitted token keeps the stored one (required the first time); the token is stored encrypted. gitops_enabled needs gitops_repo, gitops_namespace and gitops_host_pattern.",
      summaryKo: "GitLab 연동을 설정합니다(관리자). token을 빼면 저장된 토큰을 그대로 씁니다.",
      auth: write,
      orgRole: "admin",
      errors: ["invalid_request", "destination_forbidden"],
      body: PutBody,
      response: { 200: Integration, 201: Integration },
      handler: async (request, reply) => {
        const { settings, token, created } = await svc.put(callerOf(request), orgOf(request), request.body);
        return reply.code(created ? 201 : 200).send(integrationView(settings, token));
      },
    }),
  );

  routes.push(
    route({
      method: "DELETE",
      url: URL,
      operationId: "deleteOrgGitlab",
      tags,
      summary:
        "Remove the GitLab settings and token (admin); the sync history stays. deleted: false when there were none.",
      summaryKo: "GitLab 연동 설정과 토큰을 지웁니다(관리자). 동기화 기록은 남습니다.",
      auth: write,
      orgRole: "admin",
      response: { 200: Type.Object({ deleted: Type.Boolean() }) },
      handler: async (request) => svc.remove(callerOf(request), orgOf(request)),
    }),
  );

  routes.push(
    route({
      method: "POST",
      url: `${URL}/test`,
      operationId: "testOrgGitlab",
      tags,
      summary:
        "Check the connection (admin) with the stored settings, or base_url, group_path and token from the body: GitLab's version and the group. GitLab's failures are ok: false with an error sentence; a base_url that is no http(s) URL is 400 invalid_request, one naming a loopback, private, link-local or metadata address 400 destination_forbidden (nothing is sent there).",
      summaryKo: "GitLab 연결을 확인합니다(관리자). 저장된 값이나 본문 값으로 버전과 그룹을 읽어 봅니다.",
      auth: write,
      orgRole: "admin",
      errors: ["invalid_request", "destination_forbidden"],
      body: TestBody,
      response: { 200: TestResult },
      handler: async (request) => svc.test(orgOf(request), request.body),
    }),
  );

  routes.push(
    route({
      method: "GET",
      url: "/v1/org/git-syncs",
      operationId: "listOrgGitSyncs",
      tags,
      summary:
        "Recent source-control sync jobs, newest first (admin), with status and error; ?limit= (default 50, at most 200).",
      summaryKo: "최근 소스 동기화 작업(관리자): 상태와 오류. ?limit= (기본 50, 최대 200).",
      auth: read,
      orgRole: "admin",
      query: SyncsQuery,
      response: { 200: Type.Object({ items: Type.Array(Sync) }) },
      handler: async (request) => ({
        items: (await svc.list(orgOf(request), request.query.limit ?? 50)).map(syncView),
      }),
    }),
  );

  routes.push(
    route({
      method: "POST",
      url: "/v1/org/git-syncs/:id/retry",
      operationId: "retryOrgGitSync",
      tags,
      summary: "Queue a failed sync again (admin); 202 with the sync, 409 conflict when it is not failed.",
      summaryKo: "실패한 동기화를 다시 대기열에 넣습니다(관리자). 실패 상태가 아니면 409.",
      auth: write,
      orgRole: "admin",
      errors: ["conflict"],
      params: IdParams,
      response: { 202: Sync },
      handler: async (request, reply) =>
        reply.code(202).send(syncView(await svc.retry(callerOf(request), orgOf(request), request.params.id))),
    }),
  );
  registerRoutes(app, routes);
}
