import { Type } from "@sinclair/typebox";
import { callerOf } from "../../auth/principal.js";
import { Body, Nullable, Timestamp } from "../../http/schemas.js";
import type { AccessService } from "../access-service.js";
import type { LicensesService } from "../licenses-service.js";
import { account, Inquiry, inquiryView, open, OwnedFields, ScopeField, tags, withScope } from "./schemas.js";
import { route, type Route } from "../../http/route.js";

const Terms = Type.Object({
  version: Type.String({ description: "the current terms version" }),
  url: Type.String({ description: "where the terms are published" }),
  accepted: Type.Boolean({ description: "whether the caller accepted this version" }),
  accepted_at: Nullable(Timestamp),
});
const termsView = (t: { version: string; url: string; accepted: boolean; accepted_at: Date | null }) => ({
  ...t,
  accepted_at: t.accepted_at?.toISOString() ?? null,
});

/** Access status and inquiry, terms, pricing and the license public key. */
export function accessRoutes(svc: { access: AccessService; licenses: LicensesService }): Route[] {
  return [
    route({
      method: "GET",
      url: "/v1/onprem/access",
      operationId: "getOnpremAccess",
      tags,
      summary:
        "?scope=me or org: approval status (none, pending, approved, rejected), the pending inquiry and the operator's rejection note. scope=org needs membership (404 otherwise).",
      summaryKo: "?scope=me 또는 org: 승인 상태, 대기 중인 문의, 거절 사유.",
      auth: account,
      errors: ["not_found"],
      query: Type.Object({ scope: Type.Optional(ScopeField) }),
      response: {
        200: Type.Object({
          ...OwnedFields,
          status: Type.Union([
            Type.Literal("none"),
            Type.Literal("pending"),
            Type.Literal("approved"),
            Type.Literal("rejected"),
          ]),
          approved_at: Nullable(Timestamp),
          approval_note: Nullable(Type.String()),
          pending: Nullable(Inquiry),
          rejection_note: Nullable(Type.String({ description: "the operator's note on the last rejection" })),
          rejected_at: Nullable(Timestamp),
        }),
      },
      handler: async (request) => {
        const s = await svc.access.status(callerOf(request), request.query.scope ?? "me");
        return {
          scope: s.scope,
          owner: s.owner,
          status: s.status,
          approved_at: s.approved?.decided_at?.toISOString() ?? null,
          approval_note: s.approved?.note ?? null,
          pending: s.pending ? inquiryView(s.pending) : null,
          rejection_note: s.rejected?.note ?? null,
          rejected_at: s.rejected?.decided_at?.toISOString() ?? null,
        };
      },
    }),
    route({
      method: "POST",
      url: "/v1/onprem/access/request",
      operationId: "requestOnpremAccess",
      tags,
      summary:
        "Ask for on-premises access: an inquiry the operator approves or rejects. Until approved, download, trial and purchase answer 403 onprem_approval_required. scope=org needs the organization role admin; 409 while an inquiry is pending or once approved.",
      summaryKo: "온프레미스 이용 문의(승인 요청). scope=org 는 조직 관리자만.",
      auth: account,
      errors: ["not_found", "forbidden_role", "conflict"],
      body: Body({
        scope: Type.Optional(ScopeField),
        company: Type.String({ minLength: 1, maxLength: 200 }),
        contact: Type.String({ minLength: 1, maxLength: 200, description: "e-mail address or telephone" }),
        message: Type.Optional(Type.String({ maxLength: 4000 })),
      }),
      response: { 201: Inquiry },
      handler: async (request, reply) =>
        reply.code(201).send(inquiryView(await svc.access.request(callerOf(request), withScope(request.body)))),
    }),
    route({
      method: "GET",
      url: "/v1/onprem/terms",
      operationId: "getOnpremTerms",
      tags,
      summary: "The current on-premises terms version and address, and whether the caller accepted it.",
      summaryKo: "현재 약관 버전과 주소, 호출자의 동의 여부.",
      auth: account,
      response: { 200: Terms },
      handler: async (request) => termsView(await svc.access.terms(callerOf(request))),
    }),
    route({
      method: "POST",
      url: "/v1/onprem/terms/accept",
      operationId: "acceptOnpremTerms",
      tags,
      summary:
        "Accept the current terms version (another version is 400). Download, trial and purchase need it (otherwise 412 terms_required); a new version must be accepted again.",
      summaryKo: "현재 약관 버전에 동의합니다(새 버전은 다시 동의).",
      auth: account,
      body: Body({ version: Type.String({ minLength: 1, maxLength: 40 }) }),
      response: { 200: Terms },
      handler: async (request) => termsView(await svc.access.acceptTerms(callerOf(request), request.body.version)),
    }),
    route({
      method: "GET",
      url: "/v1/onprem/pricing",
      operationId: "getOnpremPricing",
      tags,
      summary: "Pricing: price per host and month (KRW), the months an order may buy, host limits, the trial's terms.",
      summaryKo: "가격 정책(호스트당 월 가격, 기간, 체험판 조건).",
      auth: account,
      response: {
        200: Type.Object({
          currency: Type.Literal("KRW"),
          price_per_host_month_krw: Type.Integer(),
          allowed_months: Type.Array(Type.Integer()),
          min_hosts: Type.Integer(),
          max_hosts: Type.Integer(),
          trial: Type.Object({ days: Type.Integer(), hosts: Type.Integer(), once_per_owner: Type.Boolean() }),
        }),
      },
      handler: async () => svc.licenses.pricing(),
    }),
    route({
      method: "GET",
      url: "/v1/onprem/license-key",
      operationId: "getOnpremLicenseKey",
      tags,
      summary:
        "Public (no token). The Ed25519 public key licenses are signed with, so an installation verifies its license offline (ONPREM_LICENSE_PUBLIC_KEY).",
      summaryKo: "라이선스 서명 공개키(Ed25519): 설치본이 오프라인으로 검증합니다.",
      auth: open,
      response: {
        200: Type.Object({
          algorithm: Type.Literal("Ed25519"),
          key_id: Type.String(),
          public_key_pem: Type.String(),
          public_key: Type.String({ description: "SubjectPublicKeyInfo DER, base64" }),
        }),
      },
      handler: async () => svc.licenses.publicKey(),
    }),
  ];
}
