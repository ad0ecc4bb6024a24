/**
 * Site locks and visitor sessions (README.md here): a partner locks its children's static sites to a tenant, a
 * department (with sub-departments) or invited subject refs, and vouches for visitors with one-time links.
 */
import { randomUUID } from "node:crypto";
import type { Static } from "@sinclair/typebox";
import type { Db, Queryable } from "../../store/db.js";
import type { Kernel } from "../../kernel/kernel.js";
import type { EdgeTarget } from "../../kernel/area.js";
import type { Principal } from "../../auth/principal.js";
import { auditedTransaction } from "../../audit/record.js";
import { ApiError } from "../../http/errors.js";
import { assertOpaque, childOf, departmentScope, type ChildRow, type PartnerRow } from "../public.js";
import { hashToken, newToken, VISITOR_PATH } from "./edge-policy.js";
import * as repo from "./repo.js";
import type { AccessBody, VisitorBody } from "./schemas.js";

/** a one-time link is good this long */
export const LINK_TTL_SECONDS = 5 * 60;

export interface AccessDeps {
  db: Db;
  kernel: Pick<Kernel, "all">;
  /** APPS_DOMAIN and EDGE_PORT, for the links of sites named by slug */
  appsDomain: string;
  edgePort: number;
}

export type AccessInput = Static<typeof AccessBody>;
export type VisitorInput = Static<typeof VisitorBody>;

interface ChildSite {
  target: EdgeTarget;
  slug: string;
  child: ChildRow;
}

export function accessService({ db, kernel, appsDomain, edgePort }: AccessDeps) {
  /** A static site of one of the partner's children; 404 for anything else (another partner's, a plain user's). */
  async function childSite(q: Queryable, partner: PartnerRow, slug: string): Promise<ChildSite> {
    for (const source of kernel.all("edgeRoutes")) {
      const target = await source.resolve(q, slug);
      if (!target) continue;
      const owned = target.kind === "site" ? await childOf(q, target.owner) : null;
      if (owned && owned.partner.account_id === partner.account_id) return { target, slug, child: owned.child };
      break;
    }
    throw new ApiError("not_found", `No static site ${slug} of this partner's children.`);
  }

  async function view(q: Queryable, site: ChildSite) {
    const lock = await repo.lockOf(q, site.target.id);
    return {
      site: site.slug,
      mode: lock?.mode ?? ("none" as const),
      tenant_ref: lock?.tenant_ref ?? null,
      department_code: lock?.department_code ?? null,
      invited_refs: lock ? await repo.invitesOf(q, site.target.id, lock.tenant_ref) : [],
      updated_at: lock?.updated_at.toISOString() ?? null,
    };
  }

  async function get(partner: PartnerRow, slug: string) {
    return view(db, await childSite(db, partner, slug));
  }

  /**
   * PUT /v1/partner/sites/{slug}/access. A new mode, tenant or department revokes the site's visitor sessions (the
   * partner vouches again); a new tenant drops the other tenants' invite lists; invited_refs replaces the tenant's
   * list (kept when not given).
   */
  async function put(p: Principal, partner: PartnerRow, slug: string, input: AccessInput) {
    assertOpaque("tenant_ref", input.tenant_ref);
    for (const ref of input.invited_refs ?? []) assertOpaque("invited_refs", ref);
    const site = await childSite(db, partner, slug);
    const siteId = site.target.id;
    return auditedTransaction(db, p, async (tx) => {
      const cur = await repo.lockOf(tx, siteId, { forUpdate: true });
      if (input.mode === "none") {
        if (cur) {
          await repo.deleteLock(tx, siteId);
          await repo.revokeVisitors(tx, siteId);
        }
        return view(tx, site);
      }
      const tenant = input.tenant_ref ?? site.child.tenant_ref;
      if (!tenant)
        throw new ApiError(
          "tenant_required",
          "Locking a site needs a tenant_ref: give one here or set the child's with PATCH /v1/partner/users.",
        );
      let department: string | null = null;
      if (input.mode === "department") {
        if (!input.department_code)
          throw new ApiError("invalid_request", "department_code is required with mode department.");
        if (!(await departmentScope(tx, partner.account_id, input.department_code)).chain.length)
          throw new ApiError(
            "unknown_department",
            `department_code "${input.department_code}" is not in the partner's chart.`,
          );
        department = input.department_code;
      }
      await repo.upsertLock(tx, {
        site_id: siteId,
        partner_id: partner.account_id,
        child_id: site.child.id,
        mode: input.mode,
        tenant_ref: tenant,
        department_code: department,
      });
      await repo.dropOtherTenants(tx, siteId, tenant);
      if (input.invited_refs) await repo.replaceInvites(tx, siteId, tenant, input.invited_refs);
      if (cur && (cur.mode !== input.mode || cur.tenant_ref !== tenant || cur.department_code !== department))
        await repo.revokeVisitors(tx, siteId);
      return view(tx, site);
    });
  }

  /** The site (and the path to land on) a visitor link is for: by slug, or by a URL on a child's site. */
  async function linkTarget(q: Queryable, partner: PartnerRow, input: VisitorInput) {
    if (!input.return_url) {
      if (!input.site) throw new ApiError("invalid_request", "Give site (a slug) or return_url.");
      const port = edgePort === 80 || edgePort === 0 ? "" : `:${edgePort}`;
      return {
        site: await childSite(q, partner, input.site),
        origin: `http://${input.site}.${appsDomain}${port}`,
        path: "/",
      };
    }
    let url: URL;
    try {
      url = new URL(input.return_url);
    } catch {
      throw new ApiError("invalid_request", "return_url must be an absolute URL.");
    }
    if (url.protocol !== "http:" && url.protocol !== "https:")
      throw new ApiError("invalid_request", "return_url must be an http or https URL.");
    const host = url.hostname.toLowerCase();
    let slug: string | null = null;
    const label = host.endsWith(`.${appsDomain}`) ? host.slice(0, -appsDomain.length - 1) : null;
    if (label && !label.includes(".")) slug = label;
    for (const hosts of slug ? [] : kernel.all("edgeHosts")) {
      slug = await hosts.appSlug(q, host);
      if (slug) break;
    }
    if (!slug || (input.site && input.site !== slug))
      throw new ApiError("invalid_request", "return_url must be on the site's own host (a child's static site).");
    return { site: await childSite(q, partner, slug), origin: url.origin, path: `${url.pathname}${url.search}` };
  }

  /** POST /v1/partner/visitor-sessions: a one-time link (5 minutes, once) that signs the visitor in on the site. */
  async function vouch(p: Principal, partner: PartnerRow, input: VisitorInput) {
    assertOpaque("subject_ref", input.subject_ref);
    assertOpaque("tenant_ref", input.tenant_ref);
    const { site, origin, path } = await linkTarget(db, partner, input);
    if (input.department_code && !(await departmentScope(db, partner.account_id, input.department_code)).chain.length)
      throw new ApiError(
        "unknown_department",
        `department_code "${input.department_code}" is not in the partner's chart.`,
      );
    const token = newToken();
    const expires = new Date(Date.now() + LINK_TTL_SECONDS * 1000);
    const id = randomUUID();
    await auditedTransaction(db, p, (tx) =>
      repo.insertLink(tx, {
        id,
        partner_id: partner.account_id,
        child_id: site.child.id,
        site_id: site.target.id,
        subject_ref: input.subject_ref,
        tenant_ref: input.tenant_ref ?? null,
        department_code: input.department_code ?? null,
        return_path: path,
        link_hash: hashToken(token),
        link_expires_at: expires,
      }),
    );
    const link = new URL(`${origin}${VISITOR_PATH}`);
    link.searchParams.set("token", token);
    link.searchParams.set("return", path);
    return { id, site: site.slug, url: link.toString(), expires_at: expires.toISOString() };
  }

  return { get, put, vouch };
}

export type AccessService = ReturnType<typeof accessService>;
