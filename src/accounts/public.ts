import type { Queryable } from "../store/db.js";
import type { TokenResolver } from "../auth/token-resolver.js";
import { revokeAllTokens } from "./repo.js";

/**
 * What other areas may use of accounts without reading its tables: the service (the console's sign-in, the
 * operator's accounts, the edge's visitor sign-in), the password rule, and the reads billing and linked apps need.
 */
export {
  accountsService,
  insertSuiteAccount,
  issueSignInSession,
  spendCapsOf,
  isLiveAccount,
  liveAccountByEmail,
  signsInWithSuite,
  MIN_PASSWORD_LENGTH,
  type AccountsService,
} from "./service.js";

/**
 * Revokes every token of an account (sessions, CLI tokens, personal keys) and tells every API process at once, in
 * the caller's transaction: for an account that must lose access (suite deprovisioning).
 */
export async function revokeEveryToken(
  q: Queryable,
  tokens: Pick<TokenResolver, "announceRevocation">,
  accountId: string,
): Promise<void> {
  await revokeAllTokens(q, accountId);
  await tokens.announceRevocation(q, { accountId });
}
