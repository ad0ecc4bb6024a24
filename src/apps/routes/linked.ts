import { Type } from "@sinclair/typebox";
import { callerOf } from "../../auth/principal.js";
import { auditDraft } from "../../audit/record.js";
import { Body, Nullable } from "../../http/schemas.js";
import { route, type Route } from "../../http/route.js";
import { podView } from "../view.js";
import type { PodRow } from "../repo.js";
import type { LinkedService } from "../linked-service.js";
import { Command, Env, Image, Logs, Params, Pod, SLUG, TailQuery, type RouteDeps } from "./schemas.js";

const tags = ["linked-apps"];
const LinkedApp = Type.Intersect([Pod, Type.Object({ linked_service: Type.String() })]);

/** Linked apps: the operator deploys for an e-mail user; the user reads logs and restarts (spec "Catalog, legacy and linked services"). */
export function linkedRoutes({ pods, urls }: RouteDeps, linked: LinkedService): Route[] {
  const view = (pod: PodRow) => podView(pod, pods.envOf(pod), urls, pods.secretEnvOf(pod));
  const linkedView = (pod: PodRow) => ({ ...view(pod), linked_service: pod.linked_service ?? "" });

  return [
    route({
      method: "POST",
      url: "/v1/operator/linked-apps",
      operationId: "operatorDeployLinkedApp",
      tags: ["operator"],
      summary:
        "A linked service deploys a pod on behalf of the account with this e-mail; the account sees it under /v1/linked-apps.",
      summaryKo: "연결된 서비스가 이메일 사용자 대신 앱을 배포합니다(운영자).",
      auth: { operator: true },
      admits: true,
      errors: [
        "not_found",
        "bad_slug",
        "bad_size",
        "bad_image",
        "slug_taken",
        "image_forbidden",
        "provision_failed",
        "runtime_unavailable",
      ],
      validationCodes: { "/pod/name": "bad_slug", "/pod/image": "bad_image" },
      body: Body({
        email: Type.String({ format: "email", maxLength: 254 }),
        service: Type.String({
          minLength: 1,
          maxLength: 100,
          description: "the linked service's name, shown to the user",
        }),
        pod: Type.Object(
          {
            name: Type.String({ pattern: SLUG, minLength: 3, maxLength: 40 }),
            image: Image,
            port: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 65535 }))),
            command: Type.Optional(Nullable(Command)),
            env: Type.Optional(Env),
            size: Type.Optional(Type.String({ minLength: 1, maxLength: 40 })),
          },
          { additionalProperties: false },
        ),
      }),
      response: {
        201: Type.Intersect([Pod, Type.Object({ linked_service: Type.String(), linked_email: Type.String() })]),
      },
      handler: async (request, reply) => {
        const pod = await linked.deploy(request.body, auditDraft(request, 201));
        return reply
          .code(201)
          .send({ ...view(pod), linked_service: pod.linked_service!, linked_email: pod.linked_email! });
      },
    }),
    route({
      method: "GET",
      url: "/v1/linked-apps",
      operationId: "listLinkedApps",
      tags,
      summary: "Read-only list of apps that a linked service deployed on behalf of the account's e-mail user.",
      summaryKo: "연결된 서비스가 대신 배포한 앱 목록(읽기 전용).",
      auth: { scope: "linked-apps:read" },
      response: { 200: Type.Array(LinkedApp) },
      handler: async (request) => (await linked.list(callerOf(request))).map(linkedView),
    }),
    route({
      method: "POST",
      url: "/v1/linked-apps/pods/:id/logs",
      operationId: "getLinkedAppLogs",
      tags,
      summary: "Logs of such an app; ?tail=N (default 100).",
      summaryKo: "연결된 앱의 로그(?tail=N).",
      auth: { scope: "linked-apps:write" },
      errors: ["not_running", "host_unavailable", "runtime_unavailable"],
      params: Params,
      query: TailQuery,
      response: { 200: Logs },
      handler: async (request) => ({
        lines: await linked.logs(callerOf(request), request.params.id, request.query.tail ?? 100),
      }),
    }),
    route({
      method: "POST",
      url: "/v1/linked-apps/pods/:id/restart",
      operationId: "restartLinkedApp",
      tags,
      summary: "Restart; only running or failed apps (else 409 invalid_state). 202.",
      summaryKo: "연결된 앱을 재시작합니다(running 또는 failed만).",
      auth: { scope: "linked-apps:write" },
      errors: ["invalid_state"],
      params: Params,
      response: { 202: LinkedApp },
      handler: async (request, reply) =>
        reply.code(202).send(linkedView(await linked.restart(callerOf(request), request.params.id))),
    }),
  ];
}
