/**
 * What the organizations area hands the kernel, and what other areas hand it back, so no area reads another's
 * tables: membership (who acts for which organization, with which role), the resources each area owns (to list
 * company assets and move them between owners), the mailer, and billing's usage totals (for budgets).
 */
import type { Queryable } from "../store/db.js";
import type { Owner } from "./owner.js";

export type OrgRole = "owner" | "admin" | "member";

const RANK: Record<OrgRole, number> = { member: 1, admin: 2, owner: 3 };

/** True when `role` is at least `needed` (owner > admin > member). */
export const roleAtLeast = (role: OrgRole, needed: OrgRole): boolean => RANK[role] >= RANK[needed];

export interface OrgMembership {
  orgId: string;
  role: OrgRole;
  departmentId: string | null;
}

/** The organizations area's answers for the rest of the platform (kernel.orgs). */
export interface OrgDirectory {
  /** the account's organization and role, or null (one organization per account at a time) */
  membership(q: Queryable, accountId: string): Promise<OrgMembership | null>;
  /**
   * Whose wallet pays an owner's usage: an organization in `personal` billing mode has each company asset paid by
   * the member who created it (`accountId`); `prepaid` (and later card and suite) organizations pay themselves.
   * Non-organization owners pay themselves.
   */
  payer(q: Queryable, owner: Owner, accountId: string): Promise<Owner>;
  /**
   * Refuses (403 forbidden_role) a change to a company asset by an account that may not manage it: members manage
   * only what they are responsible for (`asset.accountId`; null: every company asset at once), admins and the owner
   * everything, members everything when the organization's `members_manage_all_assets` is on (kernel.assertMayManage).
   */
  assertMayManage(q: Queryable, orgId: string, accountId: string, asset: ManagedAsset): Promise<void>;
}

/** A company asset about to change, as the change-permission check names it to the caller. */
export interface ManagedAsset {
  /** what it is, for the message: `bucket "logs"`, `static site "docs"` */
  label: string;
  /** the member responsible for it (its creator); null for a change that reaches every company asset of a kind */
  accountId: string | null;
}

/** One resource as its area reports it for the company-asset views and ownership moves. */
export interface OwnedResource {
  /** pod | pod-group | site | database | volume | bucket */
  kind: string;
  id: string;
  name: string;
  slug: string | null;
  owner: Owner;
  /** the creator (the member responsible for a company asset) */
  accountId: string;
  state: string;
  createdAt: Date;
}

/**
 * An area's resources for organizations (kernel.addOwned): listing an owner's, finding one by id, and moving some
 * to another owner and creator. `reassign` runs in the caller's transaction and announces the change the way the
 * area's own writes do (edge routes, owner caches), so the edge and lists follow at commit.
 */
export interface OwnedResources {
  kind: string;
  list(q: Queryable, owner: Owner): Promise<OwnedResource[]>;
  /** by id (or slug where the kind has one), whoever owns it; deleted resources are not found */
  find(q: Queryable, ref: string): Promise<OwnedResource | null>;
  reassign(q: Queryable, ids: string[], to: { owner: Owner; accountId: string }): Promise<void>;
  /**
   * Resources tied to `ref` (of any kind, this source's or another's) that must keep one owner with it: a pod's
   * attached databases and volumes, a database's apps. A designation moves the tied ones along. Optional.
   */
  ties?(q: Queryable, ref: { kind: string; id: string }): Promise<{ kind: string; id: string }[]>;
}

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html?: string;
}

/** Outgoing mail (SMTP through nodemailer, or the log when SMTP_URL is unset). */
export interface Mailer {
  /** whether mail really leaves this platform (false: only logged; callers then show links in their answers) */
  readonly delivers: boolean;
  send(message: MailMessage): Promise<void>;
}

/** Billing's usage totals for an owner (budgets): whole KRW charged for usage in [from, to), optionally by creators. */
export interface UsageTotals {
  spentKrw(q: Queryable, owner: Owner, range: { from: Date; to: Date; accountIds?: string[] }): Promise<number>;
}
