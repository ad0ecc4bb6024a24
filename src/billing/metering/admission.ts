import type { Queryable } from "../../store/db.js";
import { ApiError } from "../../http/errors.js";
import { findWalletOf } from "../ledger/ledger.js";
import { isPaidDatabase, prices } from "../catalog.js";

/**
 * Creating a paid resource (catalog price > 0) needs money: a prepaid account wallet with a balance
 * above 0 and not overdue, else 402 insufficient_funds. Free sizes (dev) are always allowed; postpaid
 * and suite-billed wallets are billed afterwards and pass.
 */
export async function assertCanCreate(q: Queryable, accountId: string, resource: { kind: "database"; size: string; storage_gb?: number }): Promise<void> {
  if (!isPaidDatabase(prices(), resource.size, resource.storage_gb ?? 1)) return;
  const wallet = await findWalletOf(q, { kind: "account", id: accountId }, "KRW");
  if (wallet && wallet.policy !== "prepaid") return;
  const balance = wallet?.balance ?? 0;
  if (balance <= 0 || wallet?.overdue_since) {
    throw new ApiError("insufficient_funds", wallet?.overdue_since
      ? `The account is overdue (balance ${balance} KRW); top up before creating paid resources.`
      : `A ${resource.size} ${resource.kind} is paid and the balance is ${balance} KRW; top up first.`);
  }
}
