import { Type } from "@sinclair/typebox";
import type { FastifyInstance, preValidationHookHandler } from "fastify";
import { callerOf } from "../../auth/principal.js";
import { ApiError } from "../../http/errors.js";
import { Body, Nullable } from "../../http/schemas.js";
import { orgOf, read, tags, write } from "../public.js";
import { ASSET_KINDS, KIND_ALIASES, type Asset, type AssetMove, type AssetsService } from "./service.js";
import { registerRoutes, route, type Route } from "../../http/route.js";

const Kind = Type.Union(
  [...ASSET_KINDS, ...Object.keys(KIND_ALIASES)].map((k) => Type.Literal(k)),
  {
    description:
      "pod, pod-group, site, database, volume, bucket, domain (a custom domain moves with its app); aliases: disk = volume, static = site, group = pod-group",
  },
);

const AssetView = Type.Object({
  kind: Type.String({ description: "pod | pod-group | site | database | volume | bucket" }),
  id: Type.String(),
  name: Type.String(),
  slug: Nullable(Type.String({ description: "the public name (a bucket's name); null for volumes" })),
  creator: Type.Object(
    {
      id: Type.String(),
      email: Nullable(Type.String({ description: "null when the account was deleted" })),
    },
    { description: "the member responsible for it (its creator, or whoever it was handed over to)" },
  ),
  state: Type.String(),
  created_at: Type.String(),
});

const MoveView = Type.Object({
  ...AssetView.properties,
  moved_with: Type.Array(AssetView, {
    description: "resources tied to it that moved with it (a pod's databases and volumes, a database's apps)",
  }),
});

const view = (a: Asset) => ({
  kind: a.kind,
  id: a.id,
  name: a.name,
  slug: a.slug,
  creator: { id: a.creator.id, email: a.creator.email },
  state: a.state,
  created_at: a.createdAt.toISOString(),
});

const moveView = (m: AssetMove) => ({ ...view(m.asset), moved_with: m.movedWith.map(view) });

/** An organization key acts for the organization, not as a person: it cannot hand over someone's personal things. */
const personalCallerOnly: preValidationHookHandler = async (request) => {
  // the authorizer has already switched a member's principal to the organization; only a key came as one
  if (request.org?.byOrganizationKey)
    throw new ApiError(
      "forbidden_role",
      "An organization API key cannot designate personal resources; the member does it with their own token.",
    );
};

/** Company assets: the caller's, designation and its removal, and the enterprise view of every one. */
export function assetRoutes(app: FastifyInstance, svc: AssetsService): void {
  const routes: Route[] = [];
  const list = { 200: Type.Object({ items: Type.Array(AssetView) }) };

  routes.push(
    route({
      method: "GET",
      url: "/v1/org/assets",
      operationId: "listOrgAssets",
      tags,
      summary: "The caller's company assets: the organization's resources the caller created or was handed.",
      summaryKo: "내가 책임지는 회사 자산 목록.",
      auth: read,
      orgRole: "member",
      errors: ["invalid_request"],
      query: Type.Object({ kind: Type.Optional(Kind) }, { additionalProperties: false }),
      response: list,
      handler: async (request) => ({
        items: (await svc.own(callerOf(request), orgOf(request), request.query.kind)).map(view),
      }),
    }),
  );

  routes.push(
    route({
      method: "POST",
      url: "/v1/org/assets",
      operationId: "designateOrgAsset",
      tags,
      summary:
        "Designate one of the caller's personal resources as a company asset (201), with what is tied to it; already the organization's: 200.",
      summaryKo: "내 개인 리소스를 회사 자산으로 지정합니다(연결된 DB·볼륨·앱도 함께).",
      auth: write,
      orgRole: "member",
      errors: ["conflict", "forbidden_role", "invalid_request"],
      body: Body({ kind: Kind, id: Type.String({ minLength: 1, maxLength: 100, description: "id or slug" }) }),
      response: { 200: MoveView, 201: MoveView },
      options: { preValidation: personalCallerOnly },
      handler: async (request, reply) => {
        const moved = await svc.designate(callerOf(request), orgOf(request), request.body);
        return reply.code(moved.moved ? 201 : 200).send(moveView(moved));
      },
    }),
  );

  routes.push(
    route({
      method: "DELETE",
      url: "/v1/org/assets/:kind/:id",
      operationId: "releaseOrgAsset",
      tags,
      summary:
        "Remove a designation (admin): the resource, with what is tied to it, returns to its creator's personal ownership.",
      summaryKo: "회사 자산 지정을 해제합니다(관리자). 만든 사람의 개인 소유로 돌아갑니다.",
      auth: write,
      orgRole: "admin",
      errors: ["conflict", "invalid_request"],
      params: Type.Object({ kind: Kind, id: Type.String({ minLength: 1, maxLength: 100 }) }),
      response: { 200: MoveView },
      handler: async (request) => moveView(await svc.release(callerOf(request), orgOf(request), request.params)),
    }),
  );

  routes.push(
    route({
      method: "GET",
      url: "/v1/org/resources",
      operationId: "listOrgResources",
      tags,
      summary: "Every company asset (pods, pod groups, sites, databases, disks, buckets) with its responsible member.",
      summaryKo: "회사 자산 전체: 파드, 사이트, 데이터베이스, 디스크, 버킷.",
      auth: read,
      orgRole: "member",
      errors: ["invalid_request"],
      query: Type.Object(
        {
          kind: Type.Optional(Kind),
          creator: Type.Optional(Type.String({ format: "uuid", description: "a member's account id" })),
        },
        { additionalProperties: false },
      ),
      response: list,
      handler: async (request) => ({ items: (await svc.all(orgOf(request), request.query)).map(view) }),
    }),
  );
  registerRoutes(app, routes);
}
