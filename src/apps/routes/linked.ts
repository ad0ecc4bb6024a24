import { Type } from "@sinclair/typebox";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import { callerOf } from "../../auth/principal.js";
import { auditDraft } from "../../audit/record.js";
import { Body, Nullable } from "../../http/schemas.js";
import { podView } from "../view.js";
import type { PodRow } from "../repo.js";
import type { LinkedService } from "../linked-service.js";
import { Command, Env, Image, Logs, Params, Pod, SLUG, TailQuery, type RouteDeps } from "./schemas.js";

const tags = ["linked-apps"];

/** Linked apps: the operator deploys for an e-mail user; the user reads logs and restarts (spec "Catalog, legacy and linked services"). */
export function linkedRoutes(app: FastifyInstance, { pods, urls }: RouteDeps, linked: LinkedService): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const view = (pod: PodRow) => podView(pod, pods.envOf(pod), urls);

  r.post(
    "/v1/operator/linked-apps",
    {
      config: {
        auth: { operator: true },
        validationCodes: { "/pod/name": "bad_slug", "/pod/image": "bad_image" },
        errors: [
          "not_found",
          "bad_slug",
          "bad_size",
          "bad_image",
          "slug_taken",
          "image_forbidden",
          "insufficient_funds",
          "provision_failed",
          "runtime_unavailable",
        ],
        summaryKo: "연결된 서비스가 이메일 사용자 대신 앱을 배포합니다(운영자).",
      },
      schema: {
        operationId: "operatorDeployLinkedApp",
        tags: ["operator"],
        summary:
          "A linked service deploys a pod on behalf of the account with this e-mail; the account sees it under /v1/linked-apps.",
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
      },
    },
    async (request, reply) => {
      const pod = await linked.deploy(request.body, auditDraft(request, 201));
      return reply
        .code(201)
        .send({ ...view(pod), linked_service: pod.linked_service!, linked_email: pod.linked_email! });
    },
  );

  const LinkedApp = Type.Intersect([Pod, Type.Object({ linked_service: Type.String() })]);
  const linkedView = (pod: PodRow) => ({ ...view(pod), linked_service: pod.linked_service ?? "" });

  r.get(
    "/v1/linked-apps",
    {
      config: {
        auth: { scope: "linked-apps:read" },
        errors: [],
        summaryKo: "연결된 서비스가 대신 배포한 앱 목록(읽기 전용).",
      },
      schema: {
        operationId: "listLinkedApps",
        tags,
        summary: "Read-only list of apps that a linked service deployed on behalf of the account's e-mail user.",
        response: { 200: Type.Array(LinkedApp) },
      },
    },
    async (request) => (await linked.list(callerOf(request))).map(linkedView),
  );

  r.post(
    "/v1/linked-apps/pods/:id/logs",
    {
      config: {
        auth: { scope: "linked-apps:write" },
        errors: ["not_found", "not_running", "host_unavailable", "runtime_unavailable"],
        summaryKo: "연결된 앱의 로그(?tail=N).",
      },
      schema: {
        operationId: "getLinkedAppLogs",
        tags,
        summary: "Logs of such an app; ?tail=N (default 100).",
        params: Params,
        querystring: TailQuery,
        response: { 200: Logs },
      },
    },
    async (request) => ({ lines: await linked.logs(callerOf(request), request.params.id, request.query.tail ?? 100) }),
  );

  r.post(
    "/v1/linked-apps/pods/:id/restart",
    {
      config: {
        auth: { scope: "linked-apps:write" },
        errors: ["not_found", "invalid_state"],
        summaryKo: "연결된 앱을 재시작합니다(running 또는 failed만).",
      },
      schema: {
        operationId: "restartLinkedApp",
        tags,
        summary: "Restart; only running or failed apps (else 409 invalid_state). 202.",
        params: Params,
        response: { 202: LinkedApp },
      },
    },
    async (request, reply) =>
      reply.code(202).send(linkedView(await linked.restart(callerOf(request), request.params.id))),
  );
}
