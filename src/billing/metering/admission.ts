import type { Queryable } from "../../store/db.js";
import type { AdmissionCheck, AdmissionRequest } from "../../kernel/area.js";
import { ApiError } from "../../http/errors.js";
import { findWalletOf } from "../ledger/ledger.js";
import { isPaid, prices, type PriceCatalog } from "../catalog.js";
import { walletOwnerOf } from "../owner.js";

/**
 * Billing's admission check (kernel.admit): creating a resource of any kind whose catalog price is > 0
 * needs money: the owner's prepaid wallet with a balance above 0 and not overdue, else 402
 * insufficient_funds. Free sizes (dev) are always allowed; postpaid and suite-billed wallets are billed
 * afterwards and pass. A new deployment of an existing resource at its size (`update`) holds no new capacity and
 * passes too.
 */
export function fundsCheck(catalog: () => PriceCatalog = prices): AdmissionCheck {
  return async (q: Queryable, r: AdmissionRequest) => {
    if (r.update || !isPaid(catalog(), r.kind, r.size, r.storageGb ?? 1)) return;
    const wallet = await findWalletOf(q, walletOwnerOf(r.owner), "KRW");
    if (wallet && wallet.policy !== "prepaid") return;
    const balance = wallet?.balance ?? 0;
    if (balance <= 0 || wallet?.overdue_since) {
      throw new ApiError(
        "insufficient_funds",
        wallet?.overdue_since
          ? `The account is overdue (balance ${balance} KRW); top up before creating paid resources.`
          : `A ${r.size} ${r.kind} is paid and the balance is ${balance} KRW; top up first.`,
      );
    }
  };
}
