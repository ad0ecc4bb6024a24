import { Type } from "@sinclair/typebox";
import { callerOf } from "../../auth/principal.js";
import { Body, Timestamp } from "../../http/schemas.js";
import { partnerOf } from "../guard.js";
import { PARTNER_ERRORS, tags, write } from "../schemas.js";
import type { PartnerRegistryService } from "./service.js";
import { route, type Route } from "../../http/route.js";

const ManagedRegistry = Type.Object({
  registry: Type.String({ description: "host:port of the platform's registry (podman login / push to it)" }),
  namespace: Type.String({ description: "<root>/<partner>/<child>" }),
  repository: Type.String({ description: "<root>/<partner>/<child>/<app>: the one repository these credentials push" }),
  image: Type.String({ description: "registry/repository: tag it and push; the child's pods run it by this name" }),
  username: Type.String(),
  password: Type.String(),
  expires_at: Timestamp,
});

/** POST /v1/partner/users/{id}/registry (spec Partner features 14). */
export function registryRoutes(svc: PartnerRegistryService): Route[] {
  return [
    route({
      method: "POST",
      url: "/v1/partner/users/:id/registry",
      operationId: "createPartnerUserRegistry",
      tags,
      summary:
        "Creates the child app's managed repository <root>/<partner>/<child>/<app> and returns short-lived credentials (podman login) that push only there; the child's token deploys its images without credentials.",
      summaryKo: "자식 앱의 관리형 레지스트리 네임스페이스와 푸시 자격 증명.",
      auth: write,
      errors: [...PARTNER_ERRORS, "registry_unavailable"],
      params: Type.Object({ id: Type.String({ format: "uuid" }) }),
      body: Body({
        app: Type.String({ minLength: 1, maxLength: 64, pattern: "^[a-z0-9]+(?:[._-][a-z0-9]+)*$" }),
      }),
      response: { 201: ManagedRegistry },
      handler: async (request, reply) =>
        reply
          .code(201)
          .send(await svc.create(callerOf(request), partnerOf(request), request.params.id, request.body.app)),
    }),
  ];
}
