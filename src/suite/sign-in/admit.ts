import { randomUUID } from "node:crypto";
import type { Queryable } from "../../store/db.js";
import type { Platform } from "../../kernel/context.js";
import { ApiError, type ErrorCode } from "../../http/errors.js";
import { SYSTEM_TOKEN_ID } from "../../auth/principal.js";
import { insertAudit } from "../../audit/repo.js";
import { insertSuiteAccount, isLiveAccount } from "../../accounts/public.js";
import {
  addMember,
  insertOrg,
  markInviteAccepted,
  membership,
  pendingInviteFor,
  updateOrg,
  withdrawInvitesOf,
  type OrgRole,
} from "../../orgs/public.js";
import { departmentForUnits, insidePolicy } from "../directory/public.js";
import { startSuiteBilling } from "../billing/public.js";
import type { SuiteClaims, SuiteProvider, SuiteTokens, SuiteUnit } from "../provider.js";
import * as repo from "./repo.js";

/** A sign-in the join rules hold or refuse: the notice the console and the CLI show in words. */
export class SignInNotice extends ApiError {
  constructor(
    code: Extract<
      ErrorCode,
      "suite_setup_pending" | "suite_join_department" | "suite_join_invite" | "suite_not_linked"
    >,
    message: string,
  ) {
    super(code, message);
  }
}

export interface Admitted {
  accountId: string;
  orgId: string;
  /** linked the company just now (a new organization) */
  linked: boolean;
  /** joined the organization just now */
  joined: boolean;
}

interface Ctx {
  p: Platform;
  provider: SuiteProvider;
  issuer: string;
  claims: SuiteClaims & { email: string };
  tokens: SuiteTokens;
  ip: string;
  requestId: string;
}

/**
 * Decides a finished suite sign-in, in the caller's transaction (README.md here, "Sign-in"): the company's first
 * enterprise admin links a new organization; before the setup is finished only admins get in; afterwards staff
 * join by the link's policy. A refusal throws a SignInNotice and the transaction creates nothing. Identity is
 * (issuer, company, subject), never the e-mail.
 */
/** A refusal whose transaction still commits (a returning member's old invitations withdrawn). */
export interface Refused {
  notice: SignInNotice;
}

export async function admit(tx: Queryable, c: Ctx): Promise<Admitted | Refused> {
  const { claims, issuer } = c;
  await repo.lockCompany(tx, issuer, claims.companyId);
  const link = await repo.linkOfCompany(tx, issuer, claims.companyId);
  let identity = await repo.identityOf(tx, issuer, claims.companyId, claims.subject);
  // the person deleted their account here: the suite identity starts over with a new one
  if (identity && !(await isLiveAccount(tx, identity.account_id))) {
    await repo.deleteIdentity(tx, identity.account_id);
    identity = null;
  }

  if (!link) {
    if (!claims.isAdmin)
      throw new SignInNotice(
        "suite_not_linked",
        "Your company is not linked to an organization here yet; its suite enterprise admin signs in first.",
      );
    const accountId = identity?.account_id ?? (await newAccount(tx, claims));
    await assertInNoOtherOrg(tx, accountId, null);
    const orgId = randomUUID();
    await insertOrg(tx, {
      id: orgId,
      name: (claims.companyName ?? claims.companyId).slice(0, 100),
      ownerAccountId: accountId,
    });
    await updateOrg(tx, orgId, { billing_mode: "suite" });
    await startSuiteBilling(tx, orgId); // its wallet is a suite wallet from the start: suite_billed at once
    await addMember(tx, { orgId, accountId, role: "owner", departmentId: null });
    await repo.insertLink(tx, { orgId, issuer, companyId: claims.companyId, linkedBy: accountId });
    await saveIdentity(tx, c, accountId);
    await audit(tx, c, accountId, orgId, "suiteLinkOrganization");
    return { accountId, orgId, linked: true, joined: true };
  }

  const orgId = link.org_id;
  const current = identity ? await membership(tx, identity.account_id) : null;
  if (identity && current?.orgId === orgId && !identity.deprovisioned_at) {
    await saveIdentity(tx, c, identity.account_id);
    await audit(tx, c, identity.account_id, orgId, "suiteSignIn");
    return { accountId: identity.account_id, orgId, linked: false, joined: false };
  }

  // someone new, or back after being deprovisioned (or removed): admitted only as the rules say now
  const returningSince = identity ? (identity.deprovisioned_at ?? new Date()) : null;
  // an old invitation never brings a deprovisioned member back: withdrawn, even when the sign-in is refused
  if (returningSince) await withdrawInvitesOf(tx, orgId, claims.email, returningSince);
  let joining: Joining;
  try {
    joining = await joinRule(tx, c, link, returningSince);
  } catch (err) {
    if (returningSince && err instanceof SignInNotice) return { notice: err };
    throw err;
  }
  const accountId = identity?.account_id ?? (await newAccount(tx, claims));
  if (joining.inviteId) await markInviteAccepted(tx, joining.inviteId, accountId);
  if (current?.orgId !== orgId) {
    await assertInNoOtherOrg(tx, accountId, orgId);
    const departmentId = joining.departmentId ?? (await departmentForUnits(tx, orgId, joining.unitIds ?? []));
    await addMember(tx, { orgId, accountId, role: joining.role, departmentId });
  }
  await saveIdentity(tx, c, accountId);
  await audit(tx, c, accountId, orgId, "suiteJoinOrganization");
  return { accountId, orgId, linked: false, joined: true };
}

interface Joining {
  role: Exclude<OrgRole, "owner">;
  departmentId: string | null;
  inviteId?: string;
  /** the member's suite units, when known (the primary first) */
  unitIds?: string[];
}

/**
 * Who may join now. Before the setup is finished only the company's suite enterprise admins (as admins); afterwards
 * the enterprise admins still (so the company never locks its own admins out), and staff by the join policy.
 */
async function joinRule(tx: Queryable, c: Ctx, link: repo.LinkRow, returningSince: Date | null): Promise<Joining> {
  const { claims } = c;
  if (!link.setup_done_at && !claims.isAdmin)
    throw new SignInNotice(
      "suite_setup_pending",
      "Your company's setup is not finished yet; sign in again once an admin has finished it.",
    );
  if (claims.isAdmin) return { role: "admin", departmentId: null, unitIds: await memberUnits(c, false) };
  if (link.join_policy === "invite") {
    const invite = await pendingInviteFor(tx, link.org_id, claims.email, returningSince);
    if (!invite)
      throw new SignInNotice(
        "suite_join_invite",
        `Only staff an admin invited can join; ask an admin to invite ${claims.email}.`,
      );
    return { role: invite.role, departmentId: invite.department_id, inviteId: invite.id };
  }
  // all, departments: the directory part's one rule of who is inside the policy (the same its syncs apply)
  const unitIds = await memberUnits(c, link.join_policy === "departments");
  const chart = link.join_policy === "departments" ? await suiteChart(c) : [];
  const answer = insidePolicy({ joinPolicy: link.join_policy, joinUnits: link.join_units }, chart, unitIds, {
    invited: false,
  });
  if (!answer.inside)
    throw new SignInNotice(
      answer.notice,
      answer.notice === "suite_join_department"
        ? "Only staff of the departments your company chose can join; ask an admin to add your department."
        : `Only staff an admin invited can join; ask an admin to invite ${claims.email}.`,
    );
  return { role: "member", departmentId: null, unitIds };
}

/** The member's suite units from the directory. For the departments policy the directory must answer (else 503);
 * otherwise they only place a new member in a department, and the department sync places them later. */
async function memberUnits(c: Ctx, required: boolean): Promise<string[]> {
  try {
    const member = await c.provider.directory.member(c.claims.companyId, c.claims.subject);
    return member?.unitIds ?? [];
  } catch (err) {
    if (required) throw err instanceof ApiError ? err : unavailable(err);
    c.p.log.warn({ err }, "suite sign-in: the directory did not say the member's units; the sync will");
    return [];
  }
}

/** The suite's chart (the departments policy reads the chosen units and their descendants in it). */
async function suiteChart(c: Ctx): Promise<SuiteUnit[]> {
  try {
    return await c.provider.directory.units(c.claims.companyId);
  } catch (err) {
    throw err instanceof ApiError ? err : unavailable(err);
  }
}

const unavailable = (err: unknown) =>
  new ApiError("suite_unavailable", `The suite's directory did not answer: ${(err as Error).message}`);

async function newAccount(tx: Queryable, claims: SuiteClaims & { email: string }): Promise<string> {
  return (await insertSuiteAccount(tx, { email: claims.email, displayName: claims.name })).id;
}

/** A suite account belongs to its company's organization only (one organization at a time). */
async function assertInNoOtherOrg(tx: Queryable, accountId: string, orgId: string | null): Promise<void> {
  const m = await membership(tx, accountId);
  if (m && m.orgId !== orgId)
    throw new ApiError(
      "conflict",
      "This suite account is already in another organization here; an admin removes it there first.",
    );
}

async function saveIdentity(tx: Queryable, c: Ctx, accountId: string): Promise<void> {
  const column = (name: string) => `suite_identities.${name}`;
  await repo.saveIdentity(tx, {
    accountId,
    issuer: c.issuer,
    companyId: c.claims.companyId,
    subject: c.claims.subject,
    email: c.claims.email,
    accessTokenSealed: c.p.secrets.seal(c.tokens.accessToken, column("access_token_sealed")),
    refreshTokenSealed: c.tokens.refreshToken
      ? c.p.secrets.seal(c.tokens.refreshToken, column("refresh_token_sealed"))
      : null,
    tokenExpiresAt: c.tokens.expiresAt,
  });
}

/** The sign-in's audit row, in its transaction: the platform acts (no token yet), for the organization. */
async function audit(tx: Queryable, c: Ctx, accountId: string, orgId: string, action: string): Promise<void> {
  await insertAudit(tx, {
    accountId,
    owner: { kind: "org", id: orgId },
    tokenId: SYSTEM_TOKEN_ID,
    tokenKind: "full",
    action,
    resourceKind: "suite",
    target: c.claims.companyId,
    ip: c.ip,
    status: 200,
    requestId: c.requestId,
  });
}
