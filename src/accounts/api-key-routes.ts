import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { callerOf } from "../auth/principal.js";
import { ApiKey, KeyRequestBody, keyView } from "../auth/api-keys.js";
import type { AccountsService } from "./service.js";
import { registerRoutes, route, type Route } from "../http/route.js";
import { noContentAfter } from "../http/no-content.js";

/** Scoped API keys: full-access tokens only (spec: Account). */
export async function apiKeyRoutes(app: FastifyInstance, accounts: AccountsService) {
  const routes: Route[] = [];
  const account = { account: true } as const;

  routes.push(
    route({
      method: "GET",
      url: "/v1/api-keys",
      operationId: "listApiKeys",
      tags: ["account"],
      summary: "List scoped API keys (never their secrets).",
      summaryKo: "범위 제한 API 키 목록.",
      auth: account,
      errors: ["forbidden_role"],
      response: { 200: Type.Array(ApiKey) },
      handler: async (request) => (await accounts.listKeys(callerOf(request))).map(keyView),
    }),
  );

  routes.push(
    route({
      method: "POST",
      url: "/v1/api-keys",
      operationId: "createApiKey",
      tags: ["account"],
      summary: "Issue a scoped key (opk_…) with scopes and optional expiry; the key is shown once.",
      summaryKo: "범위 제한 키를 발급합니다. 키 값은 이때 한 번만 보입니다.",
      auth: account,
      errors: ["invalid_scope", "forbidden_role"],
      body: KeyRequestBody,
      response: {
        201: Type.Composite([ApiKey, Type.Object({ key: Type.String({ description: "the secret, shown only now" }) })]),
      },
      handler: async (request, reply) => {
        const { row, secret } = await accounts.issueScopedKey(callerOf(request), request.body);
        return reply.code(201).send({ ...keyView(row), key: secret });
      },
    }),
  );

  routes.push(
    route({
      method: "DELETE",
      url: "/v1/api-keys/:id",
      operationId: "revokeApiKey",
      tags: ["account"],
      summary: "Revoke a key; every API process refuses it at once.",
      summaryKo: "키를 폐기합니다. 모든 API 프로세스에서 즉시 거부됩니다.",
      auth: account,
      errors: ["forbidden_role"],
      params: Type.Object({ id: Type.String({ format: "uuid" }) }),
      response: { 204: Type.Null() },
      handler: async (request, reply) =>
        noContentAfter(reply, accounts.revokeKey(callerOf(request), request.params.id)),
    }),
  );
  registerRoutes(app, routes);
}
