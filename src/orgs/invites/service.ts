/**
 * Invitations by e-mail (README.md here, "Invitations and members"): admins invite several addresses at once, each
 * gets a mail with a one-time link valid 7 days; the invited account accepts (optionally leaving its current
 * organization), previews are public to whoever holds the link, pending ones can be withdrawn.
 */
import { randomUUID } from "node:crypto";
import type { FastifyBaseLogger } from "fastify";
import type { Db } from "../../store/db.js";
import { isUuid } from "../../store/db.js";
import type { Principal } from "../../auth/principal.js";
import type { OrgMembership } from "../public.js";
import { auditedTransaction } from "../../audit/record.js";
import { ApiError, found } from "../../http/errors.js";
import * as core from "../public.js";
import { removeFromOrg, type ChangeDeps } from "../public.js";
import { resolveDepartments, type DepartmentChoice } from "./departments.js";
import { hashToken, INVITE_TTL_MS, inviteLink, inviteMail, maskEmail, newToken } from "./mail.js";
import * as repo from "./repo.js";

export interface InvitesDeps extends ChangeDeps {
  db: Db;
  log: FastifyBaseLogger;
  /** PUBLIC_URL or the platform's own address (mail.ts publicBaseUrl) */
  baseUrl: string;
  /** addresses an organization may invite (or re-invite) in 24 hours (ORG_INVITES_PER_DAY) */
  perDay: number;
}

export interface InviteRequest extends DepartmentChoice {
  email: string;
  role?: repo.InviteRole;
}

export type InviteResult =
  | { email: string; result: "invited" | "renewed"; reason: null; invite: repo.InviteRow; link?: string }
  | { email: string; result: "skipped" | "failed"; reason: string; invite: repo.InviteRow | null; link?: undefined };

export type PreviewStatus = "pending" | "expired" | "accepted" | "withdrawn";

export const isExpired = (r: { status: string; expires_at: Date }, now = Date.now()) =>
  r.status === "pending" && r.expires_at.getTime() <= now;

const statusOf = (r: repo.InviteRow): PreviewStatus => (isExpired(r) ? "expired" : r.status);

const notFound = () => new ApiError("not_found", "No such invitation.");

export function invitesService(d: InvitesDeps) {
  const { db } = d;

  /** Sends one invitation mail; a failure withdraws the invitation (its link reached nobody). */
  async function deliver(
    org: core.OrgRow,
    inviter: string,
    r: repo.InviteRow,
    token: string,
  ): Promise<{ link: string } | { error: string }> {
    const link = inviteLink(d.baseUrl, token);
    try {
      await d.kernel.mailer.send(
        inviteMail({ to: r.email, orgName: org.name, inviter, role: r.role, link, expiresAt: r.expires_at }),
      );
      return { link };
    } catch (err) {
      d.log.warn({ err, invite: r.id }, "invitation mail failed; the invitation is withdrawn");
      await repo.decide(db, r.id, "withdrawn");
      return { error: `The mail could not be sent (${(err as Error).message}); nothing is pending for this address.` };
    }
  }

  return {
    async list(m: OrgMembership) {
      return repo.listPending(db, m.orgId);
    },

    async invite(p: Principal, m: OrgMembership, items: InviteRequest[]): Promise<InviteResult[]> {
      if (m.role !== "owner" && items.some((i) => i.role === "admin"))
        throw new ApiError("forbidden_role", "Only the owner invites admins; admins invite members.");
      const inviter = p.account.display_name || p.account.email;
      const created = await auditedTransaction(db, p, async (tx) => {
        // one invitation round per organization at a time: the pending-per-address index never races
        await repo.lockOrgInvites(tx, m.orgId);
        const org = await core.findOrg(tx, m.orgId);
        if (!org) throw new ApiError("not_found", "The organization no longer exists.");
        // a bound on mail sent in the platform's name: addresses invited or renewed in the last 24 hours
        const recent = await repo.invitedSince(tx, m.orgId, new Date(Date.now() - 24 * 3600 * 1000));
        if (recent + items.length > d.perDay)
          throw new ApiError(
            "too_many_requests",
            `An organization invites at most ${d.perDay} addresses in 24 hours (${recent} so far); try again later.`,
            { "retry-after": "3600" },
          );
        const departments = await resolveDepartments(tx, m.orgId, items);
        const emails = items.map((i) => i.email.trim().toLowerCase());
        const members = await repo.memberEmails(tx, m.orgId, emails);
        const seen = new Set<string>();
        const out: { email: string; result: InviteResult["result"]; reason: string | null; token?: string }[] = [];
        const rows = new Map<string, repo.InviteRow>();
        for (const [n, item] of items.entries()) {
          const email = emails[n];
          if (seen.has(email)) {
            out.push({ email, result: "skipped", reason: "The address appears earlier in this request." });
            continue;
          }
          seen.add(email);
          if (members.has(email)) {
            out.push({ email, result: "skipped", reason: "Already a member of this organization." });
            continue;
          }
          const { token, hash } = newToken();
          const write: repo.InviteWrite = {
            email,
            role: item.role ?? "member",
            departmentId: departments[n] ?? null,
            tokenHash: hash,
            invitedBy: p.accountId,
            expiresAt: new Date(Date.now() + INVITE_TTL_MS),
          };
          const pending = await repo.findPendingByEmail(tx, m.orgId, email);
          const id = pending?.id ?? randomUUID();
          if (pending) await repo.renewInvite(tx, id, write);
          else await repo.insertInvite(tx, id, m.orgId, write);
          rows.set(email, (await repo.findById(tx, m.orgId, id))!);
          out.push({ email, result: pending ? "renewed" : "invited", reason: null, token });
        }
        return { org, out, rows };
      });

      // after the commit: a mail never announces an invitation that is not there
      const results: InviteResult[] = [];
      for (const r of created.out) {
        const row = created.rows.get(r.email) ?? null;
        if (!r.token || !row) {
          results.push({ email: r.email, result: "skipped", reason: r.reason!, invite: null });
          continue;
        }
        const sent = await deliver(created.org, inviter, row, r.token);
        if ("error" in sent) {
          results.push({
            email: r.email,
            result: "failed",
            reason: sent.error,
            invite: { ...row, status: "withdrawn" },
          });
          continue;
        }
        const result = r.result as "invited" | "renewed";
        // the link reaches the invitee by mail only; without SMTP the inviter hands it over
        const link = d.kernel.mailer.delivers ? undefined : sent.link;
        results.push({ email: r.email, result, reason: null, invite: row, ...(link ? { link } : {}) });
      }
      return results;
    },

    /** Public: what the link's holder sees before signing in; unknown tokens are 404. */
    async preview(token: string) {
      const r = found(await repo.findByTokenHash(db, hashToken(token)));
      const org = found(await core.findOrg(db, r.org_id));
      return {
        org_name: org.name,
        inviter: r.inviter_name || r.inviter_email,
        email: maskEmail(r.email),
        role: r.role,
        department_name: r.department_name,
        status: statusOf(r),
        expires_at: r.expires_at.toISOString(),
      };
    },

    /**
     * The invited account joins with the invitation's role and department. Another organization's member joins
     * only with leave_current (leaving it as POST /v1/org/leave would); that organization's owner never (409).
     */
    async accept(p: Principal, token: string, leaveCurrent: boolean) {
      if (p.owner.kind !== "account")
        throw new ApiError("forbidden_role", "Accept an invitation with your own account, not for an organization.");
      const hash = hashToken(token);
      const first = found(await repo.findByTokenHash(db, hash));
      // the audit row is the joined organization's
      const asOrg: Principal = { ...p, owner: { kind: "org", id: first.org_id } };
      return auditedTransaction(db, asOrg, async (tx) => {
        // the same lock as creating an organization: one membership change per account at a time
        await core.lockAccountMembership(tx, p.accountId);
        // organizations (joined, left) locked in id order, then the invitation, as deleting an organization does:
        // two accounts swapping organizations, or an acceptance racing a deletion, never deadlock
        const seen = await core.membership(tx, p.accountId);
        const locked = new Map<string, core.OrgRow | null>();
        for (const id of [...new Set([first.org_id, seen?.orgId ?? first.org_id])].sort())
          locked.set(id, await core.findOrg(tx, id, true));
        const org = locked.get(first.org_id);
        const r = await repo.findByTokenHash(tx, hash, true);
        if (!org || !r) throw notFound();
        if (r.status !== "pending") throw new ApiError("conflict", `The invitation was ${r.status} already.`);
        if (isExpired(r)) throw new ApiError("conflict", "The invitation expired; ask the organization for a new one.");
        const mine = (await repo.accountEmail(tx, p.accountId)) ?? "";
        if (mine.toLowerCase() !== r.email.toLowerCase())
          throw new ApiError(
            "forbidden_role",
            `This invitation is for ${maskEmail(r.email)}; sign in with that address to accept it.`,
          );
        const current = await core.membership(tx, p.accountId);
        let left: { org_id: string; assets_handed_over: number } | null = null;
        if (current?.orgId === org.id)
          throw new ApiError("conflict", "The account is already a member of this organization.");
        if (current) {
          if (current.role === "owner")
            throw new ApiError(
              "conflict",
              "The account owns another organization; an owner cannot leave it (delete it first).",
            );
          if (!leaveCurrent)
            throw new ApiError(
              "conflict",
              "The account is in another organization (one at a time); accept with leave_current=true to leave it.",
            );
          const previous = locked.get(current.orgId) ?? (await core.findOrg(tx, current.orgId, true));
          if (previous) left = { org_id: previous.id, ...(await removeFromOrg(tx, d, previous, p.accountId)) };
        }
        await core.addMember(tx, {
          orgId: org.id,
          accountId: p.accountId,
          role: r.role,
          departmentId: r.department_id,
        });
        await repo.decide(tx, r.id, "accepted", p.accountId);
        await d.tokens.announceAccountChange(tx, p.accountId);
        return { org, role: r.role, memberCount: await core.countMembers(tx, org.id), left };
      });
    },

    async withdraw(p: Principal, m: OrgMembership, id: string) {
      if (!isUuid(id)) throw notFound();
      return auditedTransaction(db, p, async (tx) => {
        const r = found(await repo.findById(tx, m.orgId, id, true));
        if (r.status !== "pending") throw new ApiError("conflict", `The invitation was ${r.status} already.`);
        await repo.decide(tx, r.id, "withdrawn");
        return { ...r, status: "withdrawn" as const };
      });
    },
  };
}

export type InvitesService = ReturnType<typeof invitesService>;
