import { randomUUID } from "node:crypto";
import type { FastifyBaseLogger } from "fastify";
import { inTransaction, type Db } from "../../store/db.js";
import type { Kernel } from "../../kernel/kernel.js";
import type { BuildObserver } from "../../builds/contract.js";
import { systemPrincipal, type Principal } from "../../auth/principal.js";
import { auditedTransaction } from "../../audit/record.js";
import { ApiError, asApiError, found } from "../../http/errors.js";
import * as repo from "./repo.js";

/**
 * Base-image refresh (issue 14; README, "Base-image refresh"): records the builds of company apps (a kernel build
 * observer), checks their base images' digests against their registries, proposes rebuilds, rebuilds through the
 * builds area (kernel.use("rebuilds")), and with policy `auto` starts them itself.
 */
export interface RefreshDeps {
  db: Db;
  kernel: Pick<Kernel, "use" | "all">;
  log: FastifyBaseLogger;
}

const APP_SOURCES = { pod: "pod", group: "pod-group" } as const;

export function refreshService(deps: RefreshDeps) {
  const { db, kernel, log } = deps;
  const org = (id: string) => ({ kind: "org" as const, id });

  /** The builds area tells every ended build: company app builds are recorded, rebuilds settle their proposals. */
  const observer: BuildObserver = {
    ended: async (b) => {
      if (b.owner.kind !== "org") return false;
      return inTransaction(db, async (tx) => {
        const reason = `the rebuild ${b.status === "cancelled" ? "was cancelled" : "failed"}; see GET /v1/builds/${b.id}`;
        await repo.settleRebuild(tx, b.id, b.status === "succeeded", reason);
        if (b.status !== "succeeded" || !b.app) return false;
        const recorded = await repo.recordBuild(tx, {
          build_id: b.id,
          org_id: b.owner.id,
          app_kind: b.app.kind,
          app_id: b.app.id,
          app_slug: b.app.slug,
          image: b.image,
          base_images: b.baseImages,
        });
        await repo.settleByBuild(tx, b.app.id, b.baseImages);
        return recorded; // keep its source for rebuilds
      });
    },
  };

  async function builder() {
    const rebuilds = kernel.use("rebuilds");
    if (!rebuilds) return { name: "none", version: null, available: false, problem: "no builds area" };
    return rebuilds.builder();
  }

  async function settingsOf(orgId: string): Promise<repo.Settings> {
    return found(await repo.settings(db, orgId), "organization");
  }

  async function list(orgId: string) {
    const s = await settingsOf(orgId);
    await repo.prune(db, orgId);
    return { ...s, builder: await builder(), items: await repo.list(db, orgId) };
  }

  /** The organization's apps that are company assets now, by "<kind>:<id>", with their responsible member. */
  async function companyApps(orgId: string): Promise<Map<string, string>> {
    const apps = new Map<string, string>();
    for (const source of kernel.all("owned").filter((s) => s.kind === "pod" || s.kind === "pod-group"))
      for (const r of await source.list(db, org(orgId))) apps.set(`${r.kind}:${r.id}`, r.accountId);
    return apps;
  }

  /**
   * One check of an organization: for each company app whose newest recorded build is where its image came from,
   * each base image's digest now (asked once per image) against the one the build pulled; a difference is a
   * proposal unless that version was proposed or dismissed before. With policy auto the apps with open proposals
   * are rebuilt. `p` is the admin who asked (audit), null for the periodic job.
   */
  async function check(p: Principal | null, orgId: string): Promise<{ created: number; checked: number }> {
    const s = await settingsOf(orgId);
    await repo.prune(db, orgId);
    const apps = await companyApps(orgId);
    const builds = (await repo.currentBuilds(db, orgId)).filter((b) =>
      apps.has(`${APP_SOURCES[b.app_kind]}:${b.app_id}`),
    );
    const now = new Map<string, Promise<string | null>>();
    const proposals: Parameters<typeof repo.propose>[1][] = [];
    for (const b of builds) {
      for (const base of b.base_images) {
        const rebuilds = kernel.use("rebuilds");
        if (!base.digest || !rebuilds) continue;
        if (!now.has(base.image)) now.set(base.image, rebuilds.digestOf(org(orgId), base.image));
        const digest = await now.get(base.image)!.catch((err) => {
          log.warn({ err, org: orgId, image: base.image }, "base image digest not read; checked again next time");
          return null;
        });
        if (digest && digest !== base.digest)
          proposals.push({
            id: randomUUID(),
            org_id: orgId,
            app_kind: b.app_kind,
            app_id: b.app_id,
            app_slug: b.app_slug,
            build_id: b.build_id,
            base_image: base.image,
            old_digest: base.digest,
            new_digest: digest,
          });
      }
    }
    const created = await auditedTransaction(db, p, async (tx) => {
      let n = 0;
      for (const f of proposals) if (await repo.propose(tx, f)) n++;
      return n;
    });
    if (s.policy === "auto")
      for (const b of builds) await autoRebuild(orgId, b, apps.get(`${APP_SOURCES[b.app_kind]}:${b.app_id}`)!);
    return { created, checked: builds.length };
  }

  /** policy auto: the app's open proposals are rebuilt at once, acting for the app's responsible member. */
  async function autoRebuild(orgId: string, b: repo.AppBuildRow, accountId: string): Promise<void> {
    const principal = systemPrincipal({
      accountId,
      owner: org(orgId),
      email: "",
      displayName: "image refresh",
      audit: {
        action: "autoImageRefreshRebuild",
        target: b.app_id,
        ip: "image-refresh",
        requestId: `image-refresh:${b.build_id}`,
        status: 202,
        written: false,
      },
    });
    await startRebuild(principal, orgId, b.app_id, null).catch((err) =>
      log.warn({ err, org: orgId, app: b.app_id }, "automatic base-image rebuild not started"),
    );
  }

  /**
   * Claims the app's open proposals (and `only`, whatever its status) as rebuilding, then asks the builds area for a
   * rebuild of the app's newest build; the claim goes back when the rebuild cannot start. Null: nothing to rebuild.
   */
  async function startRebuild(p: Principal, orgId: string, appId: string, only: repo.RefreshRow | null) {
    const claimed = await inTransaction(db, async (tx) => {
      const open = await repo.openOfApp(tx, orgId, appId);
      const rows = only && !open.some((r) => r.id === only.id) ? [...open, only] : open;
      await repo.setStatus(
        tx,
        rows.map((r) => r.id),
        "rebuilding",
      );
      return rows;
    });
    if (!claimed.length) return null;
    const giveBack = () =>
      inTransaction(db, async (tx) => {
        for (const r of claimed) await repo.setStatus(tx, [r.id], r.status, { error: r.error });
      });
    try {
      const rebuilds = kernel.use("rebuilds");
      if (!rebuilds) throw new ApiError("builder_unavailable", "This platform has no builds area.");
      const current = await repo.currentBuildOf(db, orgId, appId);
      if (!current) throw new ApiError("conflict", "No build of this app is recorded any more; build it from source.");
      const started = await rebuilds.rebuild(p, current.build_id);
      await repo.setStatus(
        db,
        claimed.map((r) => r.id),
        "rebuilding",
        { rebuildBuildId: started.id },
      );
      return { build_id: started.id, tag: started.tag };
    } catch (err) {
      await giveBack();
      throw err;
    }
  }

  /** POST …/{id}/rebuild: the proposal's app is rebuilt (its other open proposals go along). */
  async function rebuild(p: Principal, orgId: string, id: string) {
    const r = found(await repo.find(db, orgId, id), "image refresh proposal");
    if (r.status === "rebuilding" || r.status === "done")
      throw new ApiError(
        "conflict",
        `This proposal is ${r.status}${r.rebuild_build_id ? ` (build ${r.rebuild_build_id})` : ""}.`,
      );
    const started = await startRebuild(p, orgId, r.app_id, r);
    if (!started) throw new ApiError("conflict", "This proposal changed meanwhile; read it again.");
    return started;
  }

  /** POST …/{id}/dismiss: this app is never proposed this version of this base again. */
  async function dismiss(p: Principal, orgId: string, id: string): Promise<repo.RefreshRow> {
    return auditedTransaction(db, p, async (tx) => {
      const r = found(await repo.find(tx, orgId, id, true), "image refresh proposal");
      if (r.status === "rebuilding" || r.status === "done")
        throw new ApiError("conflict", `This proposal is ${r.status}; only proposed or failed ones are dismissed.`);
      await repo.dismiss(tx, r);
      return (await repo.find(tx, orgId, id))!;
    });
  }

  /** The periodic job: every organization with policy notify or auto is pruned and checked. */
  async function checkAll(): Promise<number> {
    let created = 0;
    await repo.prune(db, null);
    for (const orgId of await repo.orgsToCheck(db)) {
      try {
        created += (await check(null, orgId)).created;
      } catch (err) {
        log.warn({ err: asApiError(err) ?? err, org: orgId }, "base-image check failed; retried next hour");
      }
    }
    return created;
  }

  return { observer, list, check, rebuild, dismiss, checkAll };
}

export type RefreshService = ReturnType<typeof refreshService>;
