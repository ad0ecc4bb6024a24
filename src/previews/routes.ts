import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { callerOf } from "../auth/principal.js";
import { Body, IdParams, Nullable, Timestamp } from "../http/schemas.js";
import { registerRoutes, route, type Route } from "../http/route.js";
import { resourceRoutes } from "../http/resource-routes.js";
import type { LinkRow, PreviewWithLink } from "./repo.js";
import { previewUrl, webhookUrl, type GitLabHook, type PreviewsService, type PreviewUrls } from "./service.js";

const tags = ["previews"];
const write = { scope: "previews:write" } as const;

/** `<app>-mr-<n>` is a pod slug (at most 40): the app's part leaves room for the merge request's number */
const AppName = Type.String({
  pattern: "^[a-z][a-z0-9-]{1,28}[a-z0-9]$",
  description: "3-30 lowercase letters, digits, hyphens; previews are <app_name>-mr-<n>",
});

const LinkBody = Body({
  base_url: Type.String({ minLength: 8, maxLength: 500, description: "the GitLab instance, e.g. https://gitlab.com" }),
  project: Type.String({ minLength: 1, maxLength: 255, description: "the project's id or full path (group/name)" }),
  token: Type.String({
    minLength: 8,
    maxLength: 500,
    description: "a token with api scope (reads archives, posts notes); stored encrypted, never shown",
  }),
  app_name: AppName,
  dockerfile: Type.Optional(
    Type.String({ minLength: 1, maxLength: 255, description: "inside the repository; default Dockerfile" }),
  ),
  port: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 65535, description: "default 8080" }))),
  size: Type.Optional(Type.String({ minLength: 1, maxLength: 40, description: "pod size; default nano" })),
  env: Type.Optional(
    Type.Record(Type.String({ pattern: "^[A-Za-z_][A-Za-z0-9_]{0,127}$" }), Type.String({ maxLength: 32768 }), {
      maxProperties: 100,
    }),
  ),
  database: Type.Optional(
    Nullable(
      Type.String({ minLength: 1, maxLength: 64, description: "a database to branch per preview (DATABASE_URL)" }),
    ),
  ),
  idle_stop_seconds: Type.Optional(
    Nullable(Type.Integer({ minimum: 60, maximum: 86_400, description: "default 900; null: never" })),
  ),
  max_age_seconds: Type.Optional(Type.Integer({ minimum: 3600, maximum: 90 * 86_400, description: "default 7 days" })),
});

const Link = Type.Object({
  id: Type.String(),
  base_url: Type.String(),
  project: Type.String(),
  app_name: Type.String(),
  dockerfile: Type.String(),
  port: Nullable(Type.Integer()),
  size: Type.String(),
  database: Nullable(Type.String()),
  idle_stop_seconds: Nullable(Type.Integer()),
  max_age_seconds: Type.Integer(),
  webhook_url: Type.String({ description: "GitLab project → Settings → Webhooks: merge request and push events" }),
  created_at: Timestamp,
});
const CreatedLink = Type.Intersect([
  Link,
  Type.Object({ webhook_secret: Type.String({ description: "GitLab's Secret token field; shown only here" }) }),
]);

const Preview = Type.Object({
  id: Type.String(),
  link_id: Type.String(),
  app_name: Type.String(),
  project: Type.String(),
  merge_request_iid: Type.Integer(),
  source_branch: Type.String(),
  state: Type.String({
    description: "building, deploying, running (idle-stopped pods wake on request), failed, removing, removed",
  }),
  commit: Type.String({ description: "the latest commit heard from GitLab" }),
  deployed_commit: Nullable(Type.String()),
  url: Type.String(),
  pod_id: Nullable(Type.String()),
  database_branch_id: Nullable(
    Type.String({ description: "the merge request's branch of the linked database (attached: DATABASE_URL)" }),
  ),
  build_id: Nullable(Type.String()),
  error: Nullable(Type.String()),
  created_at: Timestamp,
  updated_at: Timestamp,
  closed_at: Nullable(Timestamp),
});

const WebhookQuery = Type.Object({ link: Type.Optional(Type.String({ maxLength: 100 })) });
const WebhookAnswer = Type.Object({ accepted: Type.Boolean(), previews: Type.Array(Type.String()) });

/** Links, previews and GitLab's webhook (README.md here). */
export function previewRoutes(app: FastifyInstance, svc: PreviewsService, urls: PreviewUrls): void {
  const linkView = (l: LinkRow) => ({
    ...{ id: l.id, base_url: l.base_url, project: l.project, app_name: l.app_name, dockerfile: l.dockerfile },
    ...{ port: l.port, size: l.size, database: l.database_id, idle_stop_seconds: l.idle_stop_seconds },
    ...{
      max_age_seconds: l.max_age_seconds,
      webhook_url: webhookUrl(urls, l.id),
      created_at: l.created_at.toISOString(),
    },
  });
  const previewView = (p: PreviewWithLink) => ({
    ...{ id: p.id, link_id: p.link_id, app_name: p.app_name, project: p.project, merge_request_iid: p.mr_iid },
    ...{ source_branch: p.source_branch, state: p.state, commit: p.sha, deployed_commit: p.deployed_sha },
    ...{ url: previewUrl(urls, p.slug), pod_id: p.pod_id, build_id: p.build_id, error: p.error },
    database_branch_id: p.db_branch_id,
    ...{ created_at: p.created_at.toISOString(), updated_at: p.updated_at.toISOString() },
    closed_at: p.closed_at?.toISOString() ?? null,
  });

  const routes: Route[] = [
    ...resourceRoutes({
      name: "PreviewLink",
      url: "/v1/previews/links",
      tags,
      params: IdParams,
      scope: "previews",
      schema: Link,
      view: linkView,
      listItems: true,
      create: {
        summary:
          "Link a GitLab project for preview environments: each merge request gets a build of its source branch as the pod <app_name>-mr-<n>. Answers the webhook URL and its secret (shown once) for the project's webhook.",
        summaryKo: "GitLab 프로젝트를 미리보기 환경에 연결합니다. 웹훅 주소와 비밀값(한 번만 표시)을 돌려줍니다.",
        errors: ["invalid_request", "destination_forbidden", "conflict", "not_found"],
        body: LinkBody,
        run: (caller, body) => svc.createLink(caller, body),
        answer: { schema: CreatedLink, view: ({ link, secret }) => ({ ...linkView(link), webhook_secret: secret }) },
      },
      list: {
        summary: "The linked GitLab projects (the token and webhook secret are never shown).",
        summaryKo: "연결된 GitLab 프로젝트 목록(토큰과 비밀값은 보이지 않습니다).",
        run: (caller) => svc.listLinks(caller.owner),
      },
    }),
    route({
      method: "DELETE",
      url: "/v1/previews/links/:id",
      operationId: "deletePreviewLink",
      tags,
      summary: "Unlink a project: every preview of it is removed (pod, database branch, URL) by a job.",
      summaryKo: "프로젝트 연결을 끊습니다. 미리보기는 모두 지워집니다.",
      auth: write,
      params: IdParams,
      errors: ["not_found"],
      response: { 200: Type.Object({ deleted: Type.Boolean(), previews_removing: Type.Integer() }) },
      handler: async (request) => svc.deleteLink(callerOf(request), request.params.id),
    }),
    ...resourceRoutes({
      name: "Preview",
      url: "/v1/previews",
      tags,
      params: IdParams,
      scope: "previews",
      schema: Preview,
      view: previewView,
      listItems: true,
      list: {
        summary: "Preview environments with state and URL, newest first (removed ones of the last 30 days too).",
        summaryKo: "미리보기 환경 목록: 상태와 주소.",
        run: (caller) => svc.listPreviews(caller.owner),
      },
      get: {
        summary: "One preview environment.",
        summaryKo: "미리보기 환경 하나.",
        errors: ["not_found"],
        run: (caller, id) => svc.getPreview(caller.owner, id),
      },
    }),
    route({
      method: "POST",
      url: "/v1/previews/gitlab/webhook",
      operationId: "previewGitlabWebhook",
      tags,
      summary:
        "GitLab's project webhook (merge request and push events). No token: X-Gitlab-Token must carry the link's webhook secret, else 401 and nothing happens. Records what the merge request wants and queues the work.",
      summaryKo: "GitLab 웹훅(머지 리퀘스트, 푸시). X-Gitlab-Token이 연결의 비밀값과 같아야 합니다.",
      auth: { public: true },
      query: WebhookQuery,
      body: Type.Object({}, { additionalProperties: true }),
      errors: ["webhook_secret_invalid", "invalid_request"],
      response: { 202: WebhookAnswer },
      handler: async (request, reply) => {
        const header = (name: string) => {
          const v = request.headers[name];
          return Array.isArray(v) ? v[0] : v;
        };
        const answer = await svc.webhook(
          request.query.link,
          header("x-gitlab-token"),
          header("x-gitlab-event"),
          request.body as GitLabHook,
        );
        return reply.code(202).send(answer);
      },
    }),
  ];
  registerRoutes(app, routes);
}
