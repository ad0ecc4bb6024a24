import type { Queryable } from "../../store/db.js";
import type { AdmissionCheck, AdmissionRequest } from "../../kernel/area.js";
import type { Owner } from "../../kernel/owner.js";
import { ApiError } from "../../http/errors.js";
import { findWalletOf } from "../ledger/ledger.js";
import { isPaid, prices, type PriceCatalog } from "../catalog.js";
import { walletOwnerOf } from "../owner.js";
import type { PayerOf } from "./meter.js";

/** The wallet an insufficient_funds message names: the caller's own, the organization's, or the member's for it. */
function walletWords(payer: Owner, owner: Owner): { balance: string; overdue: string } {
  if (payer.kind === "org")
    return {
      balance: "the organization's wallet balance",
      overdue: "The organization's wallet is overdue",
    };
  if (owner.kind === "org")
    return {
      balance: "this organization bills company assets to the member who creates them, and your personal balance",
      overdue: "Your personal wallet (which pays your company assets in this organization) is overdue",
    };
  return { balance: "the balance", overdue: "The account is overdue" };
}

/**
 * Billing's admission check (kernel.admit): creating a resource of any kind whose catalog price is > 0
 * needs money: the payer's prepaid wallet with a balance above 0 and not overdue, else 402
 * insufficient_funds. The payer is kernel.payer's: the owner itself, or for a company asset of an organization
 * in personal billing the creating member (the message names the wallet). Free sizes (dev) are always allowed;
 * postpaid and suite-billed wallets are billed afterwards and pass.
 * A new deployment of an existing resource at its size (`update`) holds no new capacity and passes too.
 */
export function fundsCheck(
  payerOf: PayerOf = async (_q, owner) => owner,
  catalog: () => PriceCatalog = prices,
): AdmissionCheck {
  return async (q: Queryable, r: AdmissionRequest) => {
    if (r.update || !isPaid(catalog(), r.kind, r.size, r.storageGb ?? 1)) return;
    const payer = await payerOf(q, r.owner, r.accountId);
    const wallet = await findWalletOf(q, walletOwnerOf(payer), "KRW");
    if (wallet && wallet.policy !== "prepaid") return;
    const balance = wallet?.balance ?? 0;
    if (balance <= 0 || wallet?.overdue_since) {
      const words = walletWords(payer, r.owner);
      throw new ApiError(
        "insufficient_funds",
        wallet?.overdue_since
          ? `${words.overdue} (balance ${balance} KRW); top up before creating paid resources.`
          : `A ${r.size} ${r.kind} is paid and ${words.balance} is ${balance} KRW; top up first.`,
      );
    }
  };
}
