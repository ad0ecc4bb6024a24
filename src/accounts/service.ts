import type { Config } from "../config/config.js";
import { inTransaction, isUniqueViolation, type Db } from "../store/db.js";
import { ApiError, badRequest, notFound } from "../http/errors.js";
import type { TokenResolver } from "../auth/token-resolver.js";
import { hashPassword, normaliseEmail, verifyPassword } from "../auth/secrets.js";
import { parseScope } from "../auth/scopes.js";
import * as repo from "./repo.js";

export const MIN_PASSWORD_LENGTH = 8;

export function accountsService(
  db: Db,
  config: Pick<Config, "sessionTtlDays" | "defaultAccountSpendCapKrw" | "defaultAppSpendCapKrw">,
  tokens: Pick<TokenResolver, "announceRevocation" | "announceAccountChange">,
) {
  const sessionExpiry = () => new Date(Date.now() + config.sessionTtlDays * 86_400_000);

  async function createAccount(input: { email: string; password: string | null; displayName: string | null }) {
    const email = normaliseEmail(input.email);
    const passwordHash = input.password === null ? null : await hashPassword(input.password);
    try {
      return await inTransaction(db, async (tx) => {
        const account = await repo.insertAccount(tx, { email, passwordHash, displayName: input.displayName });
        const token = await repo.issueToken(tx, { accountId: account.id, kind: "full", name: "session", scopes: [], expiresAt: sessionExpiry() });
        return { account, token: token.secret };
      });
    } catch (err) {
      if (isUniqueViolation(err, "accounts_email_live")) throw new ApiError("email_taken", "An account with this e-mail already exists.");
      throw err;
    }
  }

  async function login(emailRaw: string, password: string) {
    const account = await repo.findLiveAccountByEmail(db, normaliseEmail(emailRaw));
    const ok = await verifyPassword(password, account?.password_hash ?? null);
    if (!account || !ok) throw new ApiError("invalid_credentials", "The e-mail or password is wrong.");
    const token = await repo.issueToken(db, { accountId: account.id, kind: "full", name: "session", scopes: [], expiresAt: sessionExpiry() });
    return token.secret;
  }

  async function revoke(accountId: string, tokenId: string, onlyScoped = false) {
    return inTransaction(db, async (tx) => {
      const done = await repo.revokeToken(tx, accountId, tokenId, onlyScoped ? "scoped" : undefined);
      if (done) await tokens.announceRevocation(tx, { tokenId });
      return done;
    });
  }

  async function getAccount(accountId: string) {
    const account = await repo.findLiveAccount(db, accountId);
    if (!account) throw notFound("account");
    return account;
  }

  function spendCaps(a: Pick<repo.AccountRow, "account_spend_cap_krw" | "app_spend_cap_krw">) {
    return {
      account_spend_cap_krw: a.account_spend_cap_krw ?? config.defaultAccountSpendCapKrw,
      account_spend_cap_is_default: a.account_spend_cap_krw === null,
      app_spend_cap_krw: a.app_spend_cap_krw ?? config.defaultAppSpendCapKrw,
      app_spend_cap_is_default: a.app_spend_cap_krw === null,
    };
  }

  /** 0 restores the platform default, stored as NULL so a later change of the default applies. */
  async function setSpendCap(accountId: string, which: "account_spend_cap_krw" | "app_spend_cap_krw", amount: number) {
    const account = await updateProfile(accountId, { [which]: amount === 0 ? null : amount });
    return spendCaps(account);
  }

  /** Every change of account fields is announced, since API processes serve the account from their token caches. */
  async function updateProfile(accountId: string, patch: Parameters<typeof repo.updateAccount>[2]) {
    return inTransaction(db, async (tx) => {
      const account = await repo.updateAccount(tx, accountId, patch);
      if (!account) throw notFound("account");
      await tokens.announceAccountChange(tx, accountId);
      return account;
    });
  }

  async function changePassword(accountId: string, tokenId: string, current: string | undefined, next: string) {
    const account = await getAccount(accountId);
    if (account.password_hash !== null) {
      if (current === undefined) throw badRequest("current_password_required", "This account has a password; send current_password to change it.");
      if (!(await verifyPassword(current, account.password_hash))) throw new ApiError("wrong_password", "current_password is wrong.");
    }
    const hash = await hashPassword(next);
    await inTransaction(db, async (tx) => {
      await repo.updateAccount(tx, accountId, { password_hash: hash });
      // other sign-in sessions end with the old password; this session and scoped keys stay
      await repo.revokeAllTokens(tx, accountId, { kind: "full", except: tokenId });
      await tokens.announceRevocation(tx, { accountId });
    });
  }

  async function deleteAccount(accountId: string) {
    await inTransaction(db, async (tx) => {
      await repo.markAccountDeleted(tx, accountId);
      await repo.revokeAllTokens(tx, accountId);
      await tokens.announceRevocation(tx, { accountId });
    });
  }

  async function issueScopedKey(accountId: string, input: { name: string; scopes: string[]; expires_at?: string }) {
    const bad = input.scopes.filter((s) => parseScope(s) === null);
    if (bad.length) throw badRequest("invalid_scope", `Unknown or malformed scope: ${bad.join(", ")}.`);
    let expiresAt: Date | null = null;
    if (input.expires_at !== undefined) {
      expiresAt = new Date(input.expires_at);
      if (Number.isNaN(expiresAt.getTime())) throw badRequest("invalid_request", "expires_at must be an RFC 3339 time.");
      if (expiresAt.getTime() <= Date.now()) throw badRequest("invalid_request", "expires_at must be in the future.");
    }
    return repo.issueToken(db, { accountId, kind: "scoped", name: input.name, scopes: [...new Set(input.scopes)], expiresAt });
  }

  return { createAccount, login, revoke, getAccount, spendCaps, setSpendCap, updateProfile, changePassword, deleteAccount, issueScopedKey };
}

export type AccountsService = ReturnType<typeof accountsService>;
