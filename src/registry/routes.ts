import { Type } from "@sinclair/typebox";
import { callerOf } from "../auth/principal.js";
import { NoContent, Timestamp } from "../http/schemas.js";
import { route, type Route } from "../http/route.js";
import { noContentAfter } from "../http/no-content.js";
import type { RegistryService } from "./service.js";
import { TOKEN_PATH } from "./realm.js";

const tags = ["registry"];

const REPO_NAME = "^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*$";

const Credentials = Type.Object({
  registry: Type.String({ description: "host:port to log in to and to prefix image names with" }),
  namespace: Type.String({ description: "images go under <registry>/<namespace>/" }),
  username: Type.String(),
  password: Type.String({ description: "shown once" }),
  expires_at: Timestamp,
});

const Listing = Type.Object({
  registry: Type.String(),
  namespace: Type.String(),
  repositories: Type.Array(
    Type.Object({
      name: Type.String({ description: "repository name within the namespace" }),
      image: Type.String({ description: "the full image name to push, pull and deploy" }),
      tags: Type.Array(Type.String()),
    }),
  ),
});

const Token = Type.Object({
  token: Type.String(),
  access_token: Type.String(),
  expires_in: Type.Integer({ minimum: 0, maximum: 86_400 }),
  issued_at: Timestamp,
});

/** The image registry (README: src/registry/README.md). */
export function registryRoutes(svc: RegistryService): Route[] {
  return [
    route({
      method: "POST",
      url: "/v1/registry/credentials",
      operationId: "createRegistryCredentials",
      tags,
      summary:
        "Short-lived credentials for `podman login` / `docker login`: push and pull under the owner's namespace only (a key limited to registry instances: only those repositories). Stored hashed; the password is shown once.",
      summaryKo: "podman/docker login용 단기 레지스트리 자격 증명을 발급합니다.",
      auth: { scope: "registry:write", instance: "list" },
      errors: ["registry_unavailable"],
      response: { 201: Credentials },
      handler: async (request, reply) => {
        const issued = await svc.createCredentials(callerOf(request), request.instanceFilter);
        return reply.code(201).send({ ...issued, expires_at: issued.expires_at.toISOString() });
      },
    }),
    route({
      method: "GET",
      url: "/v1/registry",
      operationId: "getRegistry",
      tags,
      summary: "The registry address, the owner's namespace, and its repositories with their tags.",
      summaryKo: "내 레지스트리 네임스페이스의 저장소와 태그.",
      auth: { scope: "registry:read", instance: "list" },
      errors: ["registry_unavailable"],
      response: { 200: Listing },
      handler: async (request) => svc.list(callerOf(request), request.instanceFilter),
    }),
    route({
      method: "DELETE",
      url: "/v1/registry/repositories/:name/tags/:tag",
      operationId: "deleteRegistryTag",
      tags,
      summary:
        "Delete the image a tag points to (every tag naming the same manifest goes with it; layers are reclaimed by the registry's garbage collection). name is relative to the namespace; URL-encode a slash in it.",
      summaryKo: "태그가 가리키는 이미지를 삭제합니다.",
      auth: { scope: "registry:write", instance: { param: "name" } },
      errors: ["registry_unavailable"],
      params: Type.Object({
        name: Type.String({ pattern: REPO_NAME, minLength: 1, maxLength: 200 }),
        tag: Type.String({ pattern: "^[\\w][\\w.-]{0,127}$", maxLength: 128 }),
      }),
      response: { 204: NoContent },
      handler: async (request, reply) =>
        noContentAfter(reply, svc.deleteTag(callerOf(request), request.params.name, request.params.tag)),
    }),
    route({
      method: "GET",
      url: TOKEN_PATH,
      operationId: "getRegistryToken",
      tags,
      summary:
        "The Docker registry token protocol (the registry's auth realm): HTTP Basic with credentials from POST /v1/registry/credentials, `service` and `scope=repository:<name>:pull,push`. Grants only what the credentials allow; other scopes are left out of the token. Clients such as podman call it themselves.",
      summaryKo: "레지스트리 토큰(Docker 토큰 프로토콜, HTTP Basic 자격 증명).",
      auth: { public: true },
      errors: ["auth_required", "registry_unavailable"],
      query: Type.Object({
        service: Type.Optional(Type.String({ maxLength: 200 })),
        scope: Type.Optional(Type.Array(Type.String({ maxLength: 600 }), { maxItems: 20 })),
        account: Type.Optional(Type.String({ maxLength: 200 })),
        client_id: Type.Optional(Type.String({ maxLength: 200 })),
      }),
      response: { 200: Token },
      handler: async (request, reply) => {
        const query = new URLSearchParams(request.url.split("?")[1] ?? "");
        reply.header("cache-control", "no-store");
        return svc.issueToken(request.headers.authorization, query);
      },
    }),
  ];
}
