import type { Owner } from "../kernel/owner.js";
import type { WalletOwner } from "./ledger/ledger.js";

/**
 * The wallet that pays for an owner's resources is the owner's own, of the same kind: an account's
 * personal wallet, an organization's wallet, a partner child's wallet. (ledger_wallets accepts
 * 'partner_child' since migration 006; the ledger's OwnerKind type does not name it yet.)
 */
export const walletOwnerOf = (owner: Owner): WalletOwner => ({ kind: owner.kind as WalletOwner["kind"], id: owner.id });
