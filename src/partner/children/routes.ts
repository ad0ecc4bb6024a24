import { Type } from "@sinclair/typebox";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
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

/** /v1/partner/users: child identities, their tokens and credit (README.md, "Children"). */
export function childRoutes(app: FastifyInstance, svc: ChildrenService): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();

  r.post(
    "/v1/partner/users",
    {
      config: {
        auth: write,
        errors: [...PARTNER_ERRORS, "unknown_department", "invalid_scope"],
        summaryKo: "자식 사용자 발급(external_ref 기준 멱등).",
      },
      schema: {
        operationId: "createPartnerUser",
        tags,
        summary:
          "Issues an isolated child identity for the partner's end user, by the partner's external_ref: 201 with its first token (once) when new, 200 with the same child (no token) when the external_ref already has one.",
        body: ChildCreate,
        response: { 200: ChildAnswer, 201: ChildAnswer },
      },
    },
    async (request, reply) => {
      const { row, created, token } = await svc.create(callerOf(request), partnerOf(request), request.body);
      return reply
        .code(created ? 201 : 200)
        .send({ ...childView(row), token: token && { ...keyView(token.row), key: token.secret } });
    },
  );

  r.patch(
    "/v1/partner/users",
    {
      config: {
        auth: write,
        errors: [...PARTNER_ERRORS, "not_found", "unknown_department"],
        summaryKo: "자식 사용자 수정(본문의 id).",
      },
      schema: {
        operationId: "updatePartnerUserById",
        tags,
        summary:
          "Updates a child named by `id` in the body: department_code, tenant_ref, monthly_cap_krw (null clears).",
        body: ChildPatchById,
        response: { 200: Child },
      },
    },
    async (request) => {
      const { id, ...patch } = request.body;
      return childView(await svc.update(callerOf(request), partnerOf(request), id, patch));
    },
  );

  r.get(
    "/v1/partner/users",
    {
      config: { auth: read, errors: [...PARTNER_ERRORS], summaryKo: "자식 사용자 목록(커서)." },
      schema: {
        operationId: "listPartnerUsers",
        tags,
        summary: "The partner's children, oldest first; next_cursor pages on (null at the end).",
        querystring: PageQuery,
        response: {
          200: Type.Object({ items: Type.Array(Child), next_cursor: Type.Union([Type.String(), Type.Null()]) }),
        },
      },
    },
    async (request) => {
      const page = await svc.list(partnerOf(request), request.query);
      return { items: page.items.map(childView), next_cursor: page.next_cursor };
    },
  );

  r.get(
    "/v1/partner/users/:id",
    {
      config: { auth: read, errors: [...PARTNER_ERRORS, "not_found"], summaryKo: "자식 사용자 조회." },
      schema: {
        operationId: "getPartnerUser",
        tags,
        summary: "One child.",
        params: ChildParams,
        response: { 200: Child },
      },
    },
    async (request) => childView(await svc.get(partnerOf(request), request.params.id)),
  );

  r.patch(
    "/v1/partner/users/:id",
    {
      config: {
        auth: write,
        errors: [...PARTNER_ERRORS, "not_found", "unknown_department"],
        summaryKo: "자식 사용자 수정.",
      },
      schema: {
        operationId: "updatePartnerUser",
        tags,
        summary: "Updates a child: department_code, tenant_ref, monthly_cap_krw (null clears).",
        params: ChildParams,
        body: ChildPatch,
        response: { 200: Child },
      },
    },
    async (request) =>
      childView(await svc.update(callerOf(request), partnerOf(request), request.params.id, request.body)),
  );

  r.delete(
    "/v1/partner/users/:id",
    {
      config: {
        auth: write,
        errors: [...PARTNER_ERRORS, "not_found"],
        summaryKo: "자식 사용자 삭제(토큰 즉시 폐기, 자원은 파트너에게).",
      },
      schema: {
        operationId: "deletePartnerUser",
        tags,
        summary:
          "Deletes a child: its tokens stop working at once on every process; its resources and remaining balance pass to the partner account.",
        params: ChildParams,
        response: { 204: NoContent },
      },
    },
    async (request, reply) => {
      await svc.remove(callerOf(request), partnerOf(request), request.params.id);
      return reply.code(204).send(null);
    },
  );

  r.post(
    "/v1/partner/users/:id/tokens",
    {
      config: {
        auth: write,
        errors: [...PARTNER_ERRORS, "not_found", "invalid_scope"],
        summaryKo: "자식 토큰 발급(최소 권한, 만료 필수).",
      },
      schema: {
        operationId: "createPartnerUserToken",
        tags,
        summary:
          "Issues a scoped opk_ token for the child: child resource scopes only (never *, partner or org), within the partner's child_scopes, expiring in expires_in_days (default 30, at most 365). The token is shown once.",
        params: ChildParams,
        body: TokenRequest,
        response: { 201: IssuedToken },
      },
    },
    async (request, reply) => {
      const t = await svc.issue(callerOf(request), partnerOf(request), request.params.id, request.body);
      return reply.code(201).send({ ...keyView(t.row), key: t.secret });
    },
  );

  r.get(
    "/v1/partner/users/:id/tokens",
    {
      config: { auth: read, errors: [...PARTNER_ERRORS, "not_found"], summaryKo: "자식 토큰 목록." },
      schema: {
        operationId: "listPartnerUserTokens",
        tags,
        summary: "The child's live tokens (never their secrets).",
        params: ChildParams,
        response: { 200: Type.Object({ items: Type.Array(ChildToken) }) },
      },
    },
    async (request) => ({ items: (await svc.listTokens(partnerOf(request), request.params.id)).map(keyView) }),
  );

  r.delete(
    "/v1/partner/users/:id/tokens/:key_id",
    {
      config: { auth: write, errors: [...PARTNER_ERRORS, "not_found"], summaryKo: "자식 토큰 폐기." },
      schema: {
        operationId: "deletePartnerUserToken",
        tags,
        summary: "Revokes one of the child's tokens at once on every process.",
        params: ChildTokenParams,
        response: { 204: NoContent },
      },
    },
    async (request, reply) => {
      await svc.revokeToken(callerOf(request), partnerOf(request), request.params.id, request.params.key_id);
      return reply.code(204).send(null);
    },
  );

  r.post(
    "/v1/partner/users/:id/credit",
    {
      config: {
        auth: write,
        errors: [...PARTNER_ERRORS, "not_found", "insufficient_funds", "conflict", "idempotency_conflict"],
        summaryKo: "파트너 지갑에서 자식 지갑으로 크레딧 이전(Idempotency-Key 필수).",
      },
      schema: {
        operationId: "creditPartnerUser",
        tags,
        summary:
          "child_prepaid: moves amount_krw from the partner's wallet to the child's in one ledger transaction, once per Idempotency-Key (required); 402 insufficient_funds when the partner's balance is short.",
        params: ChildParams,
        body: CreditBody,
        response: { 200: CreditAnswer },
      },
    },
    async (request) => {
      const key = request.headers["idempotency-key"];
      if (typeof key !== "string" || !key)
        throw new ApiError(
          "invalid_request",
          "A credit transfer needs an Idempotency-Key header (retries then move the money once).",
        );
      return svc.credit(callerOf(request), partnerOf(request), request.params.id, request.body.amount_krw, key);
    },
  );
}
