import type { AdmissionCheck } from "../../kernel/contracts.js";
import type { Platform } from "../../kernel/context.js";
import type { Queryable } from "../../store/db.js";
import { ApiError } from "../../http/errors.js";
import { billingModeOf } from "../../orgs/public.js";
import { startSuiteBilling } from "../../billing/public.js";
import { requireSuite, suiteOf } from "../state.js";
import type { SuiteAllowance } from "../provider.js";
import * as repo from "./repo.js";

/** A login token this close to its expiry counts as expired (the creation's follow-up calls would fail). */
const EXPIRY_MARGIN_MS = 60_000;

const signInAgain = (why: string) =>
  new ApiError(
    "suite_login_required",
    `${why} Company resources of this organization are billed to your suite account: sign in with the suite again, then retry.`,
  );

export function exhaustedMessage(a: SuiteAllowance): string {
  const resets = a.resetsAt ? `it resets at ${a.resetsAt.toISOString()}` : "the suite gave no reset time";
  const ask = a.contact ? `ask ${a.contact} for more` : "ask your suite administrator for more";
  return `Your suite allowance of ${a.limitKrw} KRW is used up (${a.usedKrw} KRW used, ${a.remainingKrw} KRW remaining); ${resets}, or ${ask}.`;
}

/**
 * The member's suite login, checked: a stored access token that has not expired, or a refresh token the suite still
 * honours (the fresh token is stored at once, on the pool: a refused creation must not roll back a rotated refresh
 * token). Missing, deprovisioned, or a refresh the suite refuses: 402 suite_login_required.
 */
export async function requireSuiteLogin(p: Platform, q: Queryable, accountId: string, companyId: string) {
  const identity = await repo.identityOf(q, accountId, companyId);
  if (!identity || identity.deprovisioned_at)
    throw signInAgain("You have no suite login for this organization's suite company.");
  if (
    identity.access_token_sealed &&
    (!identity.token_expires_at || identity.token_expires_at.getTime() > Date.now() + EXPIRY_MARGIN_MS)
  )
    return identity;
  if (!identity.refresh_token_sealed) throw signInAgain("Your suite login has expired.");
  const provider = requireSuite(suiteOf(p));
  try {
    const tokens = await provider.identity.refresh(
      p.secrets.open(identity.refresh_token_sealed, repo.REFRESH_TOKEN_COLUMN),
    );
    await repo.saveRefreshedTokens(p.db, accountId, {
      accessSealed: p.secrets.seal(tokens.accessToken, repo.ACCESS_TOKEN_COLUMN),
      refreshSealed: tokens.refreshToken ? p.secrets.seal(tokens.refreshToken, repo.REFRESH_TOKEN_COLUMN) : null,
      expiresAt: tokens.expiresAt,
    });
  } catch {
    // a refresh the suite refuses (or cannot answer) leaves the member without a usable login
    throw signInAgain("Your suite login has expired and could not be renewed.");
  }
  return identity;
}

/**
 * The suite billing part's admission check: a new resource in the company context of a suite-billed organization
 * needs the acting member's suite login (402 suite_login_required) and allowance left (402 suite_usage_exhausted, the
 * message naming the allowance, its reset and whom to ask); the suite unreachable is 503 suite_unavailable. New
 * deployments of existing resources (`update`), a group's replicas (`partOf`) and autoscaling growth are not new
 * resources a member asks for and pass. Free sizes are checked too: the spec blocks "creating new resources".
 * The organization's wallet gets the policy 'suite' here if linking has not done it yet (billing's funds check
 * runs after this one), so deployment works at zero balance.
 */
export function suiteAdmission(p: Platform): AdmissionCheck {
  return async (q, r) => {
    if (r.owner.kind !== "org" || r.update || r.partOf || r.growth) return;
    if ((await billingModeOf(q, r.owner.id)) !== "suite") return;
    const link = await repo.linkOf(q, r.owner.id);
    if (!link) throw signInAgain("This organization is billed through the suite but is not linked to a suite company.");
    await startSuiteBilling(q, r.owner);
    const identity = await requireSuiteLogin(p, q, r.accountId, link.company_id);
    const provider = requireSuite(suiteOf(p));
    const allowance = await provider.billing.allowance(link.company_id, identity.subject);
    if (!allowance) throw signInAgain("The suite does not list your account in this company.");
    await repo.saveAllowance(p.db, r.owner.id, r.accountId, allowance).catch(() => undefined);
    if (allowance.remainingKrw <= 0) throw new ApiError("suite_usage_exhausted", exhaustedMessage(allowance));
  };
}
