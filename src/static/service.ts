import { randomBytes, randomUUID } from "node:crypto";
import { ownerColumnsOf } from "../kernel/owner.js";
import type { Readable } from "node:stream";
import type pg from "pg";
import type { Static } from "@sinclair/typebox";
import type { Db } from "../store/db.js";
import { isUniqueViolation, isUuid } from "../store/db.js";
import type { InstanceFilter, Principal } from "../auth/principal.js";
import { auditedTransaction } from "../audit/record.js";
import { ApiError, found } from "../http/errors.js";
import type { StaticDeps } from "./config.js";
import { sitePath } from "./archive.js";
import { receiveUpload } from "./upload.js";
import * as repo from "./repo.js";
import type { SiteRow } from "./repo.js";
import type { SiteBody, SitePatchBody } from "./schemas.js";
import { siteVisibility } from "./visibility.js";
import { recordEvent } from "../events/public.js";

export type { SiteRow, DeploymentRow } from "./repo.js";

/** The route source's channel (migration 018's trigger); other areas' slug claims skip their own. */
export const STATIC_CHANNEL = "static_routes";
/** the kind admission sees for a site (free: no price in the catalog) */
export const SITE_KIND = "static-site";
/** a slug that would shadow a path of this API (/v1/static/deployments/{id}/finalize) */
const RESERVED_SLUGS = new Set(["deployments"]);

export type SiteInput = Static<typeof SiteBody>;
export type SitePatch = Static<typeof SitePatchBody>;

export type StaticService = ReturnType<typeof staticService>;

/** Sites and their deployments: the instance-limited `static` resource of the spec. */
export function staticService(deps: StaticDeps) {
  const { db, kernel } = deps;

  async function requireSite(q: Db | pg.PoolClient, p: Principal, ref: string, forUpdate = false) {
    return found(await repo.findSite(q, p.owner, ref, { forUpdate }), "static site");
  }

  async function requireDeployment(q: Db | pg.PoolClient, siteId: string, id: string, forUpdate = false) {
    return found(await repo.findDeployment(q, siteId, id, { forUpdate }), "deployment of this site");
  }

  function page(raw: string | null | undefined): string | null | undefined {
    if (raw === undefined || raw === null) return raw;
    try {
      const clean = sitePath(raw);
      if (clean) return clean;
    } catch {
      // the archive's wording does not fit a field; said below
    }
    throw new ApiError("invalid_request", 'not_found_page must be a file path inside the site, such as "404.html".');
  }

  async function create(p: Principal, input: SiteInput) {
    const slug = input.slug ?? `${input.name.slice(0, 33)}-${randomBytes(3).toString("hex")}`;
    if (RESERVED_SLUGS.has(slug)) throw new ApiError("bad_slug", `The slug "${slug}" is reserved.`);
    // paths take a slug or an id: a slug shaped like an id could never be named
    if (isUuid(slug)) throw new ApiError("bad_slug", "A slug cannot have the shape of an id (a UUID).");
    const notFoundPage = page(input.not_found_page) ?? null;
    try {
      return await auditedTransaction(db, p, async (tx) => {
        await kernel.admit(tx, { owner: p.owner, accountId: p.accountId, kind: SITE_KIND, size: "free" });
        // pods, pod groups and sites share <slug>.<APPS_DOMAIN>
        if (await kernel.appSlugTakenElsewhere(tx, slug, STATIC_CHANNEL))
          throw new ApiError("slug_taken", `The slug "${slug}" is in use.`);
        return repo.insertSite(tx, {
          id: randomUUID(),
          ...ownerColumnsOf(p),
          name: input.name,
          slug,
          spa: input.spa ?? false,
          not_found_page: notFoundPage,
        });
      });
    } catch (err) {
      if (isUniqueViolation(err, "static_sites_slug_live"))
        throw new ApiError("slug_taken", `The slug "${slug}" is in use.`);
      throw err;
    }
  }

  const list = (p: Principal, filter: InstanceFilter) => repo.listSites(db, p.owner, filter);
  const get = (p: Principal, ref: string) => requireSite(db, p, ref);

  async function update(p: Principal, ref: string, patch: SitePatch) {
    const notFoundPage = page(patch.not_found_page);
    return auditedTransaction(db, p, async (tx) => {
      const site = await requireSite(tx, p, ref, true);
      return repo.updateSite(tx, site.id, { ...patch, not_found_page: notFoundPage });
    });
  }

  /** The site leaves the edge at once (NOTIFY); its deployments and files go with the next sweep. */
  async function remove(p: Principal, ref: string) {
    await auditedTransaction(db, p, async (tx) => {
      const site = await requireSite(tx, p, ref, true);
      await repo.removeSite(tx, site.id);
    });
  }

  /** a new deployment of a site, or making one live: what organization deploy rules and blocks call an update */
  const admitDeploy = (tx: pg.PoolClient, p: Principal) =>
    kernel.admit(tx, { owner: p.owner, accountId: p.accountId, kind: SITE_KIND, size: "free", update: true });

  async function createDeployment(p: Principal, ref: string) {
    return auditedTransaction(db, p, async (tx) => {
      const site = await requireSite(tx, p, ref);
      await admitDeploy(tx, p);
      const deployment = await repo.insertDeployment(tx, { id: randomUUID(), siteId: site.id, accountId: p.accountId });
      return { site, deployment };
    });
  }

  async function listDeployments(p: Principal, ref: string) {
    const site = await requireSite(db, p, ref);
    return { site, deployments: await repo.listDeployments(db, site.id, 100) };
  }

  async function getDeployment(p: Principal, ref: string, id: string) {
    const site = await requireSite(db, p, ref);
    return { site, deployment: await requireDeployment(db, site.id, id) };
  }

  async function upload(p: Principal, ref: string, id: string, body: Readable, contentType: string | undefined) {
    const { site, deployment } = await getDeployment(p, ref, id);
    const done = await receiveUpload(deps, p, deployment, body, contentType);
    return { site, deployment: done };
  }

  /**
   * Makes an uploaded deployment live: one UPDATE of the site's live deployment, announced to every edge. A
   * deployment already live answers as it is (a retried finalize); a superseded one is made live by rollback.
   */
  async function finalizeIn(tx: pg.PoolClient, p: Principal, siteId: string, id: string) {
    const site = await requireSite(tx, p, siteId, true);
    const d = await requireDeployment(tx, site.id, id, true);
    if (d.status === "awaiting_upload")
      throw new ApiError("not_uploaded", "This deployment has no files yet; upload its archive first.");
    if (d.status === "finalized") {
      if (site.live_deployment_id === d.id) return { site, deployment: d };
      throw new ApiError(
        "conflict",
        `Deployment ${d.id} was finalized before and is superseded; make it live again with POST /v1/static/${site.slug}/rollback.`,
      );
    }
    await admitDeploy(tx, p);
    const deployment = await repo.markFinalized(tx, d.id);
    const live = await repo.setLive(tx, site.id, d.id);
    await deployed(tx, live, d.id, false);
    return { site: live, deployment };
  }

  /** `deploy.succeeded` (issue 31), in the transaction that makes the deployment live: webhooks and the console. */
  async function deployed(tx: pg.PoolClient, site: SiteRow, deploymentId: string, rollback: boolean) {
    await recordEvent(tx, {
      type: "deploy.succeeded",
      owner: { kind: site.owner_kind, id: site.owner_id },
      resource: { kind: "static_site", id: site.id },
      data: { slug: site.slug, deployment_id: deploymentId, rollback },
    });
  }

  async function finalize(p: Principal, ref: string, id: string) {
    return auditedTransaction(db, p, async (tx) => finalizeIn(tx, p, (await requireSite(tx, p, ref)).id, id));
  }

  /** Finalize addressed by the deployment's id alone (a `static:write:<slug>` key covers its site's deployments). */
  async function finalizeById(p: Principal, id: string) {
    const site = found(await repo.siteOfDeployment(db, p.owner, id), "deployment");
    return auditedTransaction(db, p, async (tx) => finalizeIn(tx, p, site.id, id));
  }

  /** An earlier finalized deployment live again (one UPDATE, like finalize). */
  async function rollback(p: Principal, ref: string, id: string) {
    return auditedTransaction(db, p, async (tx) => {
      const site = await requireSite(tx, p, ref, true);
      const d = await requireDeployment(tx, site.id, id, true);
      if (d.status !== "finalized")
        throw new ApiError(
          "conflict",
          `Deployment ${d.id} was never finalized; only earlier live deployments can be rolled back to.`,
        );
      if (site.live_deployment_id === d.id) return { site, deployment: d };
      const live = await repo.setLive(tx, site.id, d.id);
      await deployed(tx, live, d.id, true);
      return { site: live, deployment: d };
    });
  }

  /** For instance-limited keys: a site by id or slug, or a deployment by id (covered by its site's slug and id). */
  async function findInstance(p: Pick<Principal, "owner">, ref: string) {
    const site = await repo.findSite(db, p.owner, ref);
    if (site) return { id: site.id, slug: site.slug, accountId: site.account_id };
    const holder = await repo.siteOfDeployment(db, p.owner, ref);
    return holder && { id: ref, slug: null, covers: [holder.slug, holder.id], accountId: holder.account_id };
  }

  return {
    create,
    list,
    get,
    update,
    remove,
    createDeployment,
    listDeployments,
    getDeployment,
    upload,
    finalize,
    finalizeById,
    rollback,
    findInstance,
    /** the visibility in force and its source, for the site view */
    visibilityOf: (site: repo.SiteRow) => siteVisibility(db, kernel, site),
  };
}
