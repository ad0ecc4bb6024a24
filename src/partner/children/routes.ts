import { Type } from "@sinclair/typebox";
import { callerOf } from "../../auth/principal.js";
import { ApiError } from "../../http/errors.js";
import { NoContent, PageQuery } from "../../http/schemas.js";
import { keyView } from "../../auth/api-keys.js";
import { partnerOf } from "../guard.js";
import { PARTNER_ERRORS, read, tags, write } from "../schemas.js";
import type { ChildrenService } from "./service.js";
import {
  Child,
  ChildAnswer,
  ChildCreate,
  ChildParams,
  ChildPatch,
  ChildPatchById,
  ChildToken,
  ChildTokenParams,
  childView,
  CreditAnswer,
  CreditBody,
  IssuedToken,
  TokenRequest,
} from "./schemas.js";
import { route, type Route } from "../../http/route.js";
import { noContentAfter } from "../../http/no-content.js";

/** /v1/partner/users: child identities, their tokens and credit (README.md, "Children"). */
export function childRoutes(svc: ChildrenService): Route[] {
  return [
    route({
      method: "POST",
      url: "/v1/partner/users",
      operationId: "createPartnerUser",
      tags,
      summary:
        "Issues an isolated child identity for the partner's end user, by the partner's external_ref: 201 with its first token (once) when new, 200 with the same child (no token) when the external_ref already has one.",
      summaryKo: "자식 사용자 발급(external_ref 기준 멱등).",
      auth: write,
      errors: [...PARTNER_ERRORS, "unknown_department", "invalid_scope"],
      body: ChildCreate,
      response: { 200: ChildAnswer, 201: ChildAnswer },
      handler: async (request, reply) => {
        const { row, created, token } = await svc.create(callerOf(request), partnerOf(request), request.body);
        return reply
          .code(created ? 201 : 200)
          .send({ ...childView(row), token: token && { ...keyView(token.row), key: token.secret } });
      },
    }),
    route({
      method: "PATCH",
      url: "/v1/partner/users",
      operationId: "updatePartnerUserById",
      tags,
      summary: "Updates a child named by `id` in the body: department_code, tenant_ref, monthly_cap_krw (null clears).",
      summaryKo: "자식 사용자 수정(본문의 id).",
      auth: write,
      errors: [...PARTNER_ERRORS, "not_found", "unknown_department"],
      body: ChildPatchById,
      response: { 200: Child },
      handler: async (request) => {
        const { id, ...patch } = request.body;
        return childView(await svc.update(callerOf(request), partnerOf(request), id, patch));
      },
    }),
    route({
      method: "GET",
      url: "/v1/partner/users",
      operationId: "listPartnerUsers",
      tags,
      summary: "The partner's children, oldest first; next_cursor pages on (null at the end).",
      summaryKo: "자식 사용자 목록(커서).",
      auth: read,
      errors: [...PARTNER_ERRORS],
      query: PageQuery,
      response: {
        200: Type.Object({ items: Type.Array(Child), next_cursor: Type.Union([Type.String(), Type.Null()]) }),
      },
      handler: async (request) => {
        const page = await svc.list(partnerOf(request), request.query);
        return { items: page.items.map(childView), next_cursor: page.next_cursor };
      },
    }),
    route({
      method: "GET",
      url: "/v1/partner/users/:id",
      operationId: "getPartnerUser",
      tags,
      summary: "One child.",
      summaryKo: "자식 사용자 조회.",
      auth: read,
      errors: [...PARTNER_ERRORS],
      params: ChildParams,
      response: { 200: Child },
      handler: async (request) => childView(await svc.get(partnerOf(request), request.params.id)),
    }),
    route({
      method: "PATCH",
      url: "/v1/partner/users/:id",
      operationId: "updatePartnerUser",
      tags,
      summary: "Updates a child: department_code, tenant_ref, monthly_cap_krw (null clears).",
      summaryKo: "자식 사용자 수정.",
      auth: write,
      errors: [...PARTNER_ERRORS, "unknown_department"],
      params: ChildParams,
      body: ChildPatch,
      response: { 200: Child },
      handler: async (request) =>
        childView(await svc.update(callerOf(request), partnerOf(request), request.params.id, request.body)),
    }),
    route({
      method: "DELETE",
      url: "/v1/partner/users/:id",
      operationId: "deletePartnerUser",
      tags,
      summary:
        "Deletes a child: its tokens stop working at once on every process; its resources and remaining balance pass to the partner account.",
      summaryKo: "자식 사용자 삭제(토큰 즉시 폐기, 자원은 파트너에게).",
      auth: write,
      errors: [...PARTNER_ERRORS],
      params: ChildParams,
      response: { 204: NoContent },
      handler: async (request, reply) =>
        noContentAfter(reply, svc.remove(callerOf(request), partnerOf(request), request.params.id)),
    }),
    route({
      method: "POST",
      url: "/v1/partner/users/:id/tokens",
      operationId: "createPartnerUserToken",
      tags,
      summary:
        "Issues a scoped opk_ token for the child: child resource scopes only (never *, partner or org), within the partner's child_scopes, expiring in expires_in_days (default 30, at most 365). The token is shown once.",
      summaryKo: "자식 토큰 발급(최소 권한, 만료 필수).",
      auth: write,
      errors: [...PARTNER_ERRORS, "invalid_scope"],
      params: ChildParams,
      body: TokenRequest,
      response: { 201: IssuedToken },
      handler: async (request, reply) => {
        const t = await svc.issue(callerOf(request), partnerOf(request), request.params.id, request.body);
        return reply.code(201).send({ ...keyView(t.row), key: t.secret });
      },
    }),
    route({
      method: "GET",
      url: "/v1/partner/users/:id/tokens",
      operationId: "listPartnerUserTokens",
      tags,
      summary: "The child's live tokens (never their secrets).",
      summaryKo: "자식 토큰 목록.",
      auth: read,
      errors: [...PARTNER_ERRORS],
      params: ChildParams,
      response: { 200: Type.Object({ items: Type.Array(ChildToken) }) },
      handler: async (request) => ({
        items: (await svc.listTokens(partnerOf(request), request.params.id)).map(keyView),
      }),
    }),
    route({
      method: "DELETE",
      url: "/v1/partner/users/:id/tokens/:key_id",
      operationId: "deletePartnerUserToken",
      tags,
      summary: "Revokes one of the child's tokens at once on every process.",
      summaryKo: "자식 토큰 폐기.",
      auth: write,
      errors: [...PARTNER_ERRORS],
      params: ChildTokenParams,
      response: { 204: NoContent },
      handler: async (request, reply) =>
        noContentAfter(
          reply,
          svc.revokeToken(callerOf(request), partnerOf(request), request.params.id, request.params.key_id),
        ),
    }),
    route({
      method: "POST",
      url: "/v1/partner/users/:id/credit",
      operationId: "creditPartnerUser",
      tags,
      summary:
        "child_prepaid: moves amount_krw from the partner's wallet to the child's in one ledger transaction, once per Idempotency-Key (required); 402 insufficient_funds when the partner's balance is short.",
      summaryKo: "파트너 지갑에서 자식 지갑으로 크레딧 이전(Idempotency-Key 필수).",
      auth: write,
      errors: [...PARTNER_ERRORS, "insufficient_funds", "conflict", "idempotency_conflict"],
      params: ChildParams,
      body: CreditBody,
      response: { 200: CreditAnswer },
      handler: async (request) => {
        const key = request.headers["idempotency-key"];
        if (typeof key !== "string" || !key)
          throw new ApiError(
            "invalid_request",
            "A credit transfer needs an Idempotency-Key header (retries then move the money once).",
          );
        return svc.credit(callerOf(request), partnerOf(request), request.params.id, request.body.amount_krw, key);
      },
    }),
  ];
}
