import { callerOf, type Principal } from "../../auth/principal.js";
import type { ErrorCode } from "../../http/errors.js";
import { route, type Route } from "../../http/route.js";
import { resourceRoutes } from "../../http/resource-routes.js";
import { podView } from "../view.js";
import type { PodRow } from "../repo.js";
import { PodCreateBody, PodPatchBody } from "./bodies.js";
import { ExecBody, ExecResult, Logs, Params, Pod, read, TailQuery, tags, write, type RouteDeps } from "./schemas.js";

const CREATE_ERRORS = [
  "bad_slug",
  "bad_size",
  "bad_image",
  "slug_taken",
  "not_found",
  "volume_in_use",
  "image_forbidden",
  "provision_failed",
  "runtime_unavailable",
  "host_unavailable",
] as const;

/** Pods: create, list, read, change (rolling update), start/stop/restart, delete, logs, exec. */
export function podRoutes({ pods, urls }: RouteDeps): Route[] {
  const view = (pod: PodRow) => podView(pod, pods.envOf(pod), urls, pods.secretEnvOf(pod));
  // logs and exec reach the pod's serving replica: no replica running, or its host or runtime gone, refuses them
  const replicaErrors: ErrorCode[] = ["not_running", "host_unavailable", "runtime_unavailable"];
  const servingPod = (request: { principal: Principal | null; params: { id: string } }) =>
    pods.get(callerOf(request), request.params.id);

  return [
    ...resourceRoutes({
      name: "Pod",
      url: "/v1/pods",
      tags,
      params: Params,
      scope: "pods",
      instances: true,
      schema: Pod,
      view,
      service: pods,
      create: {
        summary: "Deploy a container image as a pod (201); `template` deploys a saved spec, given fields override it.",
        summaryKo: "팟(컨테이너 앱)을 만듭니다. template을 주면 저장된 사양에 주어진 필드를 덮어씁니다.",
        admits: true,
        errors: [...CREATE_ERRORS],
        validationCodes: { "/name": "bad_slug", "/slug": "bad_slug", "/size": "bad_size", "/image": "bad_image" },
        body: PodCreateBody,
      },
      list: {
        summary:
          "The caller's pods, removed ones excluded; instance-limited keys see their pods (a group id covers its members).",
        summaryKo: "팟 목록(삭제된 것 제외).",
      },
      get: { summary: "One pod by id or slug, with its state and reason.", summaryKo: "팟 하나(id 또는 slug)." },
      update: {
        summary:
          "Change image, env, size, port or command: a rolling update (the new replica starts, answers its health check, then the old one stops).",
        summaryKo: "이미지, 환경 변수, 크기를 바꿉니다(롤링 업데이트).",
        admits: true,
        errors: ["bad_size", "bad_image", "image_forbidden", "provision_failed", "runtime_unavailable"],
        validationCodes: { "/size": "bad_size", "/image": "bad_image" },
        body: PodPatchBody,
      },
      remove: {
        summary: "Remove the pod: its containers go, its volumes stay. 202 with the pod (desired_state removed).",
        summaryKo: "팟을 지웁니다(컨테이너 제거, 볼륨은 남음).",
        status: 202,
        run: (caller, id) => pods.transition(caller, id, "delete"),
      },
    }),
    ...(["start", "stop", "restart"] as const).map((action) =>
      route({
        method: "POST",
        url: `/v1/pods/:id/${action}`,
        operationId: `${action}Pod`,
        tags,
        summary: {
          start: "Start a stopped pod; 202, the reconciler brings it up.",
          stop: "Stop the pod's containers; volumes keep their data. 202.",
          restart: "Rolling restart: a new replica, then the old one stops. 202.",
        }[action],
        summaryKo: {
          start: "팟을 시작합니다.",
          stop: "팟을 멈춥니다(볼륨의 데이터는 남습니다).",
          restart: "팟을 롤링 재시작합니다.",
        }[action],
        auth: write,
        // a start runs the app again: admitted like a deployment
        admits: action === "start",
        errors: ["conflict", "runtime_unavailable"],
        params: Params,
        response: { 202: Pod },
        handler: async (request, reply) =>
          reply.code(202).send(view(await pods.transition(callerOf(request), request.params.id, action))),
      }),
    ),
    route({
      method: "GET",
      url: "/v1/pods/:id/logs",
      operationId: "getPodLogs",
      tags,
      summary: "The serving replica's last log lines (?tail=N, default 100).",
      summaryKo: "팟의 최근 로그.",
      auth: read,
      errors: replicaErrors,
      params: Params,
      query: TailQuery,
      response: { 200: Logs },
      handler: async (request) => ({ lines: await pods.logs(await servingPod(request), request.query.tail ?? 100) }),
    }),
    route({
      method: "POST",
      url: "/v1/pods/:id/exec",
      operationId: "execPod",
      tags,
      summary: "Run a command in the serving replica: exit code and output (64 KiB per stream, timeout_s ≤ 300).",
      summaryKo: "팟 안에서 명령을 실행합니다.",
      auth: write,
      errors: replicaErrors,
      params: Params,
      body: ExecBody,
      response: { 200: ExecResult },
      handler: async (request) =>
        pods.exec(await servingPod(request), request.body.command, request.body.timeout_s ?? 30),
    }),
  ];
}
