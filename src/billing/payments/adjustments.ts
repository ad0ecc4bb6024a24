import { randomUUID } from "node:crypto";
import type { Db } from "../../store/db.js";
import type { Principal } from "../../auth/principal.js";
import { auditedTransaction } from "../../audit/record.js";
import { notFound } from "../../http/errors.js";
import { isLiveAccount } from "../../accounts/public.js";
import { postWithSystem, type Currency } from "../ledger/ledger.js";

/**
 * Operator credit: an `adjustment` entry from the platform's adjustments wallet to the account's wallet,
 * in ledger units (KRW won, USD micro-dollars). The reason is kept as the entry's memo.
 */
export async function creditAccount(
  db: Db,
  caller: Principal | null,
  input: { accountId: string; amount: number; currency: Currency; reason: string },
) {
  return auditedTransaction(db, caller, async (tx) => {
    if (!(await isLiveAccount(tx, input.accountId))) throw notFound("account");
    const sourceId = randomUUID();
    const { transaction, wallet } = await postWithSystem(tx, {
      owner: { kind: "account", id: input.accountId },
      system: "adjustments",
      amount: input.amount,
      currency: input.currency,
      source: { type: "adjustment", id: sourceId },
      // a retry with the same Idempotency-Key header is answered by the HTTP layer without posting again
      idempotencyKey: `adjustment:${sourceId}`,
      memo: input.reason,
    });
    const entry = transaction.entries.find((e) => e.wallet_id === wallet.id)!;
    return {
      transaction_id: transaction.id,
      account_id: input.accountId,
      currency: input.currency,
      amount: input.amount,
      reason: input.reason,
      balance: entry.balance_after!,
      created_at: transaction.created_at,
    };
  });
}
