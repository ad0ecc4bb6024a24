/** Pricing, the one trial per owner, the caller's licenses and their signed files. */
import { randomUUID } from "node:crypto";
import type { Principal } from "../auth/principal.js";
import { auditedTransaction } from "../audit/record.js";
import { ApiError } from "../http/errors.js";
import type { Owner } from "../kernel/owner.js";
import { isUniqueViolation, type Queryable } from "../store/db.js";
import { actingFor, actingForOwnerOf, requireAccessAndTerms, visibleOwners, type Scope } from "./acting.js";
import type { AccessDeps } from "./access-service.js";
import { licenseText, signLicense, type SigningKey } from "./license.js";
import * as repo from "./repo/licenses.js";

export interface LicensesDeps extends AccessDeps {
  signingKey: SigningKey;
}

export const TRIAL_FEATURES = ["trial"];
export const PAID_FEATURES = ["standard"];

/** `months` calendar months after `from` (UTC), on the same day or the month's last day when it has none. */
export function addMonths(from: Date, months: number): Date {
  const d = new Date(from.getTime());
  const day = d.getUTCDate();
  d.setUTCDate(1);
  d.setUTCMonth(d.getUTCMonth() + months);
  const last = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0)).getUTCDate();
  d.setUTCDate(Math.min(day, last));
  return d;
}

export interface NewLicense {
  kind: "trial" | "paid";
  owner: Owner;
  accountId: string;
  orderId: string | null;
  renews: string | null;
  customer: string;
  hosts: number;
  notBefore: Date;
  notAfter: Date;
  features: string[];
}

/** Signs and stores a license in the caller's transaction. */
export async function issueLicense(tx: Queryable, key: SigningKey, n: NewLicense): Promise<repo.LicenseRow> {
  const id = randomUUID();
  const issuedAt = new Date();
  const file = signLicense(key, {
    license_id: id,
    customer: n.customer,
    owner: { kind: n.owner.kind, id: n.owner.id },
    hosts: n.hosts,
    not_before: n.notBefore.toISOString(),
    not_after: n.notAfter.toISOString(),
    features: n.features,
    issued_at: issuedAt.toISOString(),
  });
  return repo.insertLicense(tx, {
    id,
    kind: n.kind,
    owner: n.owner,
    account_id: n.accountId,
    order_id: n.orderId,
    renews: n.renews,
    customer: n.customer,
    hosts: n.hosts,
    not_before: n.notBefore,
    not_after: n.notAfter,
    features: n.features,
    issued_at: issuedAt,
    key_id: key.keyId,
    file: licenseText(file),
  });
}

export function licensesService(deps: LicensesDeps) {
  const { db, config, signingKey } = deps;

  const pricing = () => ({
    currency: "KRW" as const,
    price_per_host_month_krw: config.pricePerHostMonthKrw,
    allowed_months: config.allowedMonths,
    min_hosts: 1,
    max_hosts: config.maxHosts,
    trial: { days: config.trialDays, hosts: config.trialHosts, once_per_owner: true },
  });

  /** One trial per owner, ever: a second one (also after the first expired) is 409 conflict. */
  async function trial(p: Principal, input: { customer: string; scope: Scope }): Promise<repo.LicenseRow> {
    const acting = await actingFor(deps, p, input.scope, "admin");
    await requireAccessAndTerms(db, acting, config.termsVersion);
    const now = new Date();
    try {
      return await auditedTransaction(db, acting.principal, (tx) =>
        issueLicense(tx, signingKey, {
          kind: "trial",
          owner: acting.owner,
          accountId: p.accountId,
          orderId: null,
          renews: null,
          customer: input.customer,
          hosts: config.trialHosts,
          notBefore: now,
          notAfter: new Date(now.getTime() + config.trialDays * 86_400_000),
          features: TRIAL_FEATURES,
        }),
      );
    } catch (err) {
      if (isUniqueViolation(err, "onprem_one_trial"))
        throw new ApiError("conflict", "This owner has had its trial license; one trial per owner. Buy a license.");
      throw err;
    }
  }

  async function list(p: Principal): Promise<repo.LicenseRow[]> {
    return repo.licensesOf(db, await visibleOwners(deps, p));
  }

  /** A license of the caller or of the caller's organization (any member), else 404. */
  async function get(p: Principal, id: string): Promise<repo.LicenseRow> {
    const row = await repo.findLicense(db, id);
    if (!row) throw new ApiError("not_found", "No such license for this account.");
    await actingForOwnerOf(deps, p, row, "member", "license");
    return row;
  }

  const publicKey = () => ({
    algorithm: "Ed25519" as const,
    key_id: signingKey.keyId,
    public_key_pem: signingKey.publicKey.export({ type: "spki", format: "pem" }) as string,
    public_key: (signingKey.publicKey.export({ type: "spki", format: "der" }) as Buffer).toString("base64"),
  });

  return { pricing, trial, list, get, publicKey };
}

export type LicensesService = ReturnType<typeof licensesService>;
