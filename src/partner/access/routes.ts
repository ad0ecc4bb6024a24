import { Type } from "@sinclair/typebox";
import { callerOf } from "../../auth/principal.js";
import { Nullable, Timestamp } from "../../http/schemas.js";
import { partnerOf } from "../guard.js";
import { PARTNER_ERRORS, read, tags, write } from "../schemas.js";
import type { AccessService } from "./service.js";
import { AccessBody, Mode, Slug, VisitorBody } from "./schemas.js";
import { route, type Route } from "../../http/route.js";

const SiteAccess = Type.Object({
  site: Type.String(),
  mode: Mode,
  tenant_ref: Nullable(Type.String()),
  department_code: Nullable(Type.String()),
  invited_refs: Type.Array(Type.String(), { description: "the invite list of the lock's tenant" }),
  updated_at: Nullable(Timestamp),
});

const VisitorLink = Type.Object({
  id: Type.String(),
  site: Type.String(),
  url: Type.String({ description: "the one-time link: once, within expires_at, sets the visitor cookie" }),
  expires_at: Timestamp,
});

/** /v1/partner/sites/{slug}/access and /v1/partner/visitor-sessions (README.md here). */
export function accessRoutes(svc: AccessService): Route[] {
  const params = Type.Object({ slug: Slug });

  return [
    route({
      method: "GET",
      url: "/v1/partner/sites/:slug/access",
      operationId: "getPartnerSiteAccess",
      tags,
      summary: "A child's static site's lock: mode (none, tenant, department, invited), tenant, department, invites.",
      summaryKo: "사이트 접근 잠금 조회.",
      auth: read,
      errors: [...PARTNER_ERRORS],
      params,
      response: { 200: SiteAccess },
      handler: async (request) => svc.get(partnerOf(request), request.params.slug),
    }),
    route({
      method: "PUT",
      url: "/v1/partner/sites/:slug/access",
      operationId: "setPartnerSiteAccess",
      tags,
      summary:
        "Locks a child's static site to its tenant, a department (sub-departments included) or invited subject refs, or unlocks it (mode none). tenant_ref comes from here or the child (else 400 tenant_required); a new tenant drops the old tenant's invites; a new mode, tenant or department signs visitors out.",
      summaryKo: "사이트 잠금(회사, 부서, 초대) 또는 해제.",
      auth: write,
      errors: [...PARTNER_ERRORS, "tenant_required", "unknown_department"],
      params,
      body: AccessBody,
      response: { 200: SiteAccess },
      handler: async (request) => svc.put(callerOf(request), partnerOf(request), request.params.slug, request.body),
    }),
    route({
      method: "POST",
      url: "/v1/partner/visitor-sessions",
      operationId: "createPartnerVisitorSession",
      tags,
      summary:
        "Vouches for a visitor (opaque subject_ref, tenant_ref, department_code) on a child's site, named by slug or by return_url on it: a one-time link (5 minutes) that sets a visitor cookie (12 hours) and lands on the page.",
      summaryKo: "방문자 보증: 일회용 링크 발급.",
      auth: write,
      errors: [...PARTNER_ERRORS, "not_found", "unknown_department"],
      body: VisitorBody,
      response: { 201: VisitorLink },
      handler: async (request, reply) =>
        reply.code(201).send(await svc.vouch(callerOf(request), partnerOf(request), request.body)),
    }),
  ];
}
