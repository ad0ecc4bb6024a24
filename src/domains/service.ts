import { randomBytes, randomUUID } from "node:crypto";
import type { Principal, InstanceFilter } from "../auth/principal.js";
import { auditedTransaction } from "../audit/record.js";
import { ApiError, found, notFound } from "../http/errors.js";
import type { Kernel } from "../kernel/kernel.js";
import { ownerColumnsOf, sameOwner, type Owner } from "../kernel/owner.js";
import type { Db, Queryable } from "../store/db.js";
import type { CloudflareClient, RecordChange } from "./cloudflare.js";
import type { DomainsConfig } from "./config.js";
import { detectProvider, type DnsLookup, type ProviderGuess } from "./dns.js";
import { appHost, normalizeDomain, txtName } from "./names.js";
import * as repo from "./repo.js";
import type { DomainRow } from "./repo.js";
import { checkDomain, type VerificationCheck } from "./verification.js";

export interface DomainsDeps {
  db: Db;
  kernel: Pick<Kernel, "all" | "use" | "assertMayChange">;
  config: DomainsConfig;
  dns: DnsLookup;
  cloudflare: CloudflareClient;
}

/** An app as the edge's route sources know it (pod, group, site). */
export interface AppRef {
  kind: string;
  id: string;
  slug: string;
}

/** A domain with whether its app (its slug, an app of the same owner) still exists. */
export interface DomainEntry {
  row: DomainRow;
  appExists: boolean;
}

/**
 * The app a slug names if it is the owner's: asked of every route source, as the edge does. Another owner's app
 * (or no app) is null, so a domain never serves an app its owner does not own, even after the slug changed hands.
 */
export async function appOf(
  kernel: Pick<Kernel, "all">,
  q: Queryable,
  owner: Owner,
  slug: string,
): Promise<AppRef | null> {
  for (const source of kernel.all("edgeRoutes")) {
    const target = await source.resolve(q, slug);
    if (target) return sameOwner(target.owner, owner) ? { kind: target.kind, id: target.id, slug } : null;
  }
  return null;
}

const ownerOf = (row: Pick<DomainRow, "owner_kind" | "owner_id">): Owner => ({
  kind: row.owner_kind,
  id: row.owner_id,
});

/** Custom domains (README.md here): every operation takes the caller and works within its owner. */
export function domainsService(d: DomainsDeps) {
  const requireApp = async (p: Principal, slug: string): Promise<AppRef> => {
    return found(await appOf(d.kernel, d.db, p.owner, slug), "app");
  };

  /** the app's domain named by ref (id or name); 404 when it is another app's or nobody's */
  const requireDomain = async (p: Principal, slug: string, ref: string): Promise<{ app: AppRef; row: DomainRow }> => {
    const app = await requireApp(p, slug);
    const row = await repo.findDomain(d.db, p.owner, ref);
    if (!row || row.app_slug !== slug) throw notFound("domain");
    return { app, row };
  };

  return {
    async list(p: Principal, slug: string, filter: InstanceFilter): Promise<DomainEntry[]> {
      await requireApp(p, slug);
      const rows = await repo.listDomains(d.db, p.owner, { appSlug: slug, refs: filter });
      return rows.map((row) => ({ row, appExists: true }));
    },

    async add(p: Principal, slug: string, input: string): Promise<DomainEntry> {
      const domain = normalizeDomain(input, d.config);
      const app = await requireApp(p, slug);
      // a domain on a company app changes that app: its responsible member or an admin
      await d.kernel.assertMayChange(d.db, app.kind === "site" ? "static" : "pods", p, app.id);
      const row = await auditedTransaction(d.db, p, async (tx) => {
        const inserted = await repo.insertDomain(tx, {
          id: randomUUID(),
          ...ownerColumnsOf(p),
          domain,
          app_kind: app.kind,
          app_id: app.id,
          app_slug: app.slug,
          verification_token: randomBytes(20).toString("hex"),
        });
        if (inserted) return inserted;
        const holder = await repo.holderOf(tx, domain);
        const mine = holder && sameOwner(ownerOf(holder), p.owner);
        throw new ApiError(
          "domain_taken",
          mine
            ? `${domain} is registered already, for your app ${holder.app_slug}; delete it there first.`
            : `${domain} is registered already by another account.`,
        );
      });
      return { row, appExists: true };
    },

    async remove(p: Principal, slug: string, ref: string): Promise<void> {
      const { row } = await requireDomain(p, slug, ref);
      await auditedTransaction(d.db, p, async (tx) => {
        if (!(await repo.deleteDomain(tx, row.id))) throw notFound("domain");
      });
    },

    /**
     * Asks DNS (outside any transaction, bounded by DNS_TIMEOUT_MS) and records the outcome: found → verified,
     * served by the edge from the commit on (NOTIFY domain_routes) and a certificate asked for. A verified domain
     * is not asked again.
     */
    async verify(p: Principal, slug: string, ref: string): Promise<DomainEntry & { check: VerificationCheck | null }> {
      const { app, row } = await requireDomain(p, slug, ref);
      if (row.status === "verified") return { row, appExists: true, check: null };
      const check = await checkDomain(
        d.dns,
        row.domain,
        row.verification_token,
        appHost(app.slug, d.config.appsDomain),
      );
      const text = check.verified ? `Verified by ${check.method === "txt" ? "TXT" : "CNAME"} record.` : check.reason!;
      const updated = await auditedTransaction(d.db, p, async (tx) => {
        const after = found(await repo.recordCheck(tx, row.id, { method: check.method, text }), "domain");
        if (after.status === "verified") await d.kernel.use("certificates")?.request(tx, after.domain);
        return after;
      });
      return { row: updated, appExists: true, check };
    },

    async dnsProvider(p: Principal, slug: string, ref: string): Promise<{ row: DomainRow; guess: ProviderGuess }> {
      const { row } = await requireDomain(p, slug, ref);
      return { row, guess: await detectProvider(d.dns, row.domain) };
    },

    /**
     * Writes the verification TXT record and the CNAME to the app's host into the user's Cloudflare zone with the
     * user's API token (used for these calls only; never stored or logged).
     */
    async cloudflareAutosetup(
      p: Principal,
      slug: string,
      ref: string,
      input: { api_token: string; proxied?: boolean },
    ): Promise<{ row: DomainRow; zone: { id: string; name: string }; records: RecordChange[] }> {
      const { app, row } = await requireDomain(p, slug, ref);
      const zone = await d.cloudflare.findZone(input.api_token, row.domain);
      const records = [
        await d.cloudflare.upsert(input.api_token, zone, {
          type: "TXT",
          name: txtName(row.domain),
          content: row.verification_token,
        }),
        await d.cloudflare.upsert(input.api_token, zone, {
          type: "CNAME",
          name: row.domain,
          content: appHost(app.slug, d.config.appsDomain),
          proxied: input.proxied ?? false,
        }),
      ];
      return { row, zone, records };
    },

    /** Every domain of the owner, with whether its app still exists (one question per distinct slug). */
    async listAll(p: Principal, filter: InstanceFilter): Promise<DomainEntry[]> {
      const rows = await repo.listDomains(d.db, p.owner, { refs: filter });
      const exists = new Map<string, boolean>();
      for (const slug of new Set(rows.map((r) => r.app_slug)))
        exists.set(slug, (await appOf(d.kernel, d.db, p.owner, slug)) !== null);
      return rows.map((row) => ({ row, appExists: exists.get(row.app_slug)! }));
    },

    /** Unregisters a domain whether or not its app exists; orphanOnly refuses (409 domain_in_use) while it does. */
    async removeById(p: Principal, ref: string, orphanOnly: boolean): Promise<void> {
      const row = found(await repo.findDomain(d.db, p.owner, ref), "domain");
      await auditedTransaction(d.db, p, async (tx) => {
        if (orphanOnly && (await appOf(d.kernel, tx, p.owner, row.app_slug)))
          throw new ApiError(
            "domain_in_use",
            `${row.domain} still belongs to your app ${row.app_slug}; delete it without orphan_only, or delete the app first.`,
          );
        if (!(await repo.deleteDomain(tx, row.id))) throw notFound("domain");
      });
    },
  };
}

export type DomainsService = ReturnType<typeof domainsService>;

/** The area's per-process state: the service and its settings. */
export interface DomainsState {
  service: DomainsService;
  config: DomainsConfig;
}
