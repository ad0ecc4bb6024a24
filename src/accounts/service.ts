import type { Config } from "../config/config.js";
import { inTransaction, isUniqueViolation, type Db, type Queryable } from "../store/db.js";
import { ApiError, badRequest, found, notFound } from "../http/errors.js";
import type { TokenResolver } from "../auth/token-resolver.js";
import type { AccountSnapshot, Principal } from "../auth/principal.js";
import { hashPassword, normaliseEmail, verifyPassword } from "../auth/secrets.js";
import {
  issueScopedKey as issueKey,
  issueToken,
  listScopedKeys,
  revokeScopedKey,
  type KeyRequest,
} from "../auth/api-keys.js";
import { accountOwner } from "../kernel/owner.js";
import { auditedTransaction } from "../audit/record.js";
import * as repo from "./repo.js";

export type { TokenRow } from "../auth/api-keys.js";

export const MIN_PASSWORD_LENGTH = 8;

export type SpendCapColumn = "account_spend_cap_krw" | "app_spend_cap_krw";

/** What the token cache holds of an account, from its stored row (the password hash never leaves). */
function snapshot(a: repo.AccountRow): AccountSnapshot {
  return {
    id: a.id,
    email: a.email,
    display_name: a.display_name,
    locale: a.locale,
    has_password: a.password_hash !== null,
    account_spend_cap_krw: a.account_spend_cap_krw,
    app_spend_cap_krw: a.app_spend_cap_krw,
    created_at: a.created_at,
  };
}

type CapDefaults = Pick<Config, "defaultAccountSpendCapKrw" | "defaultAppSpendCapKrw">;

/** The caps that apply: the account's own, or the platform default where it set none (NULL). */
export function effectiveSpendCaps(
  config: CapDefaults,
  a: Pick<AccountSnapshot, "account_spend_cap_krw" | "app_spend_cap_krw">,
) {
  return {
    account_spend_cap_krw: a.account_spend_cap_krw ?? config.defaultAccountSpendCapKrw,
    account_spend_cap_is_default: a.account_spend_cap_krw === null,
    app_spend_cap_krw: a.app_spend_cap_krw ?? config.defaultAppSpendCapKrw,
    app_spend_cap_is_default: a.app_spend_cap_krw === null,
  };
}

/** A live account's caps as stored now, for other areas (billing) that must not read the accounts table; null if deleted. */
export async function spendCapsOf(q: Queryable, config: CapDefaults, accountId: string) {
  const account = await repo.findLiveAccount(q, accountId);
  return account && effectiveSpendCaps(config, account);
}

/** Whether an account exists and is not deleted, for other areas (the operator's credit) that must not read its table. */
export async function isLiveAccount(q: Queryable, accountId: string): Promise<boolean> {
  return (await repo.findLiveAccount(q, accountId)) !== null;
}

/** A live account by e-mail (id, email), for other areas (linked apps deployed on behalf of an e-mail user). */
export async function liveAccountByEmail(q: Queryable, email: string): Promise<{ id: string; email: string } | null> {
  const a = await repo.findLiveAccountByEmail(q, email);
  return a && { id: a.id, email: a.email };
}

/** A sign-in session: a full token of the account's own, valid SESSION_TTL_DAYS; its secret. */
export async function issueSignInSession(q: Queryable, config: Pick<Config, "sessionTtlDays">, accountId: string) {
  const { secret } = await issueToken(q, {
    accountId,
    owner: accountOwner(accountId),
    kind: "full",
    name: "session",
    scopes: [],
    expiresAt: new Date(Date.now() + config.sessionTtlDays * 86_400_000),
  });
  return secret;
}

/**
 * An account that signs in only through the suite (src/suite): no password, `sign_in = 'suite'`, so it never
 * merges with a password account of the same e-mail (e-mails are unique among password accounts only).
 */
export async function insertSuiteAccount(q: Queryable, a: { email: string; displayName: string | null }) {
  const row = await repo.insertAccount(q, {
    email: normaliseEmail(a.email),
    passwordHash: null,
    displayName: a.displayName,
    signIn: "suite",
  });
  return { id: row.id, email: row.email };
}

/**
 * Accounts: sign-up and sign-in (no principal yet), and everything a signed-in caller does to its own
 * account. Every change made for a caller commits its audit row in the same transaction
 * (auditedTransaction), and every change of account fields or tokens is announced, since API
 * processes serve accounts from their token caches.
 */
export function accountsService(
  db: Db,
  config: Pick<Config, "signup" | "sessionTtlDays" | "defaultAccountSpendCapKrw" | "defaultAppSpendCapKrw">,
  tokens: Pick<TokenResolver, "announceRevocation" | "announceAccountChange">,
) {
  const issueSession = (q: Queryable, accountId: string) => issueSignInSession(q, config, accountId);

  /** Creates an account and its first sign-in session; the operator also creates accounts without a password. */
  async function createAccount(input: { email: string; password: string | null; displayName: string | null }) {
    const email = normaliseEmail(input.email);
    const passwordHash = input.password === null ? null : await hashPassword(input.password);
    try {
      return await inTransaction(db, async (tx) => {
        const account = await repo.insertAccount(tx, { email, passwordHash, displayName: input.displayName });
        return { account, token: await issueSession(tx, account.id) };
      });
    } catch (err) {
      if (isUniqueViolation(err, "accounts_email_live"))
        throw new ApiError("email_taken", "An account with this e-mail already exists.");
      throw err;
    }
  }

  /** Public sign-up, unless the platform closed it. */
  async function signup(input: { email: string; password: string }) {
    if (config.signup === "closed")
      throw new ApiError("signup_closed", "Sign-up is closed on this platform; ask the operator for an account.");
    return createAccount({ email: input.email, password: input.password, displayName: null });
  }

  async function login(emailRaw: string, password: string) {
    const account = await repo.findLiveAccountByEmail(db, normaliseEmail(emailRaw));
    const ok = await verifyPassword(password, account?.password_hash ?? null);
    if (!account || !ok) throw new ApiError("invalid_credentials", "The e-mail or password is wrong.");
    return issueSession(db, account.id);
  }

  /** Revokes the calling token. */
  async function logout(p: Principal) {
    await auditedTransaction(db, p, async (tx) => {
      if (await repo.revokeToken(tx, p.accountId, p.tokenId))
        await tokens.announceRevocation(tx, { tokenId: p.tokenId });
    });
  }

  const spendCaps = (a: Pick<AccountSnapshot, "account_spend_cap_krw" | "app_spend_cap_krw">) =>
    effectiveSpendCaps(config, a);

  async function update(p: Principal, patch: Parameters<typeof repo.updateAccount>[2]): Promise<AccountSnapshot> {
    return auditedTransaction(db, p, async (tx) => {
      const account = found(await repo.updateAccount(tx, p.accountId, patch), "account");
      await tokens.announceAccountChange(tx, p.accountId);
      return snapshot(account);
    });
  }

  async function updateProfile(
    p: Principal,
    patch: { display_name?: string | null; locale?: "ko" | "en" },
  ): Promise<AccountSnapshot> {
    if (patch.display_name === undefined && patch.locale === undefined)
      throw badRequest("invalid_request", "Send display_name or locale.");
    return update(p, {
      ...(patch.display_name !== undefined ? { display_name: patch.display_name } : {}),
      ...(patch.locale !== undefined ? { locale: patch.locale } : {}),
    });
  }

  /** 0 restores the platform default, stored as NULL so a later change of the default applies. */
  async function setSpendCap(p: Principal, which: SpendCapColumn, amount: number) {
    return spendCaps(await update(p, { [which]: amount === 0 ? null : amount }));
  }

  /** Sets or changes the password; other sign-in sessions end, the caller's session and scoped keys stay. */
  async function changePassword(p: Principal, current: string | undefined, next: string) {
    const account = found(await repo.findLiveAccount(db, p.accountId), "account");
    if (account.password_hash !== null) {
      if (current === undefined)
        throw badRequest(
          "current_password_required",
          "This account has a password; send current_password to change it.",
        );
      if (!(await verifyPassword(current, account.password_hash)))
        throw new ApiError("wrong_password", "current_password is wrong.");
    }
    const hash = await hashPassword(next);
    await auditedTransaction(db, p, async (tx) => {
      await repo.updateAccount(tx, p.accountId, { password_hash: hash });
      await repo.revokeAllTokens(tx, p.accountId, { kind: "full", except: p.tokenId });
      await tokens.announceRevocation(tx, { accountId: p.accountId });
    });
  }

  /** Deletes the caller's account: every token is revoked and sign-in stops working. */
  async function deleteAccount(p: Principal) {
    await auditedTransaction(db, p, async (tx) => {
      await repo.markAccountDeleted(tx, p.accountId);
      await repo.revokeAllTokens(tx, p.accountId);
      await tokens.announceRevocation(tx, { accountId: p.accountId });
    });
  }

  /**
   * Personal keys belong to the account; organization keys are managed at /v1/org/api-keys, so in the company
   * context (X-Owner: org) these routes refuse rather than issue, list or revoke the organization's.
   */
  function personalOwner(p: Principal) {
    if (p.owner.kind === "org")
      throw new ApiError(
        "forbidden_role",
        "Organization API keys are issued, listed and revoked at /v1/org/api-keys, not in the company context here.",
      );
    return p.owner;
  }

  /** The scoped keys the calling account issued for itself (not organization keys), never their secrets. */
  async function listKeys(p: Principal) {
    return listScopedKeys(db, { owner: personalOwner(p), accountId: p.accountId });
  }

  /** Issues a scoped key acting as the caller for the caller's owner; the secret is returned only now. */
  async function issueScopedKey(p: Principal, input: KeyRequest) {
    const owner = personalOwner(p);
    return auditedTransaction(db, p, (tx) => issueKey(tx, { accountId: p.accountId, owner }, input));
  }

  /** Revokes one of the caller's personal scoped keys; 404 for anything else (another account's key, an organization key, a session, an unknown id). */
  async function revokeKey(p: Principal, keyId: string) {
    const owner = personalOwner(p);
    await auditedTransaction(db, p, async (tx) => {
      if (!(await revokeScopedKey(tx, tokens, { id: keyId, owner, accountId: p.accountId }))) throw notFound("API key");
    });
  }

  return {
    createAccount,
    signup,
    login,
    logout,
    spendCaps,
    updateProfile,
    setSpendCap,
    changePassword,
    deleteAccount,
    listKeys,
    issueScopedKey,
    revokeKey,
  };
}

export type AccountsService = ReturnType<typeof accountsService>;

/** Whether the account signs in only through the suite (a suite member), for billing's suite_billed. */
export async function signsInWithSuite(q: Queryable, accountId: string): Promise<boolean> {
  return (await repo.signInOf(q, accountId)) === "suite";
}
