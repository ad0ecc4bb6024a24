/**
 * Bank-transfer top-ups of the organization wallet: billing's own bank-transfer service (src/billing/bank) called
 * with the organization as owner (the orgs guard switched the principal), so the operator confirms them exactly as
 * personal ones and the confirmation credits the organization's wallet. Creating one needs an organization whose
 * wallet is topped up: prepaid (it pays company usage) or personal (kept for later); card and suite organizations
 * are billed afterwards, 409.
 */
import type { PaymentsConfig } from "../../config/config.js";
import type { Db } from "../../store/db.js";
import type { Principal } from "../../auth/principal.js";
import type { OrgMembership } from "../public.js";
import { ApiError } from "../../http/errors.js";
import { bankTransferService } from "../../billing/public.js";
import * as orgRepo from "../public.js";

type CreateInput = Parameters<ReturnType<typeof bankTransferService>["create"]>[1];

const TOPPED_UP = ["prepaid", "personal"];

export function orgBankService(db: Db, config: PaymentsConfig) {
  const bank = bankTransferService(db, config);

  async function modeOf(m: OrgMembership) {
    const mode = await orgRepo.billingModeOf(db, m.orgId);
    if (!mode) throw new ApiError("not_found", "The organization no longer exists.");
    return mode;
  }

  return {
    async config(p: Principal, m: OrgMembership) {
      const mode = await modeOf(m);
      return { ...(await bank.config(p)), billing_mode: mode, available: TOPPED_UP.includes(mode) };
    },

    async create(p: Principal, m: OrgMembership, input: CreateInput) {
      const mode = await modeOf(m);
      if (!TOPPED_UP.includes(mode))
        throw new ApiError(
          "conflict",
          `The organization's billing mode is ${mode}: it is billed afterwards, so its wallet takes no bank-transfer top-ups (only prepaid or personal organizations).`,
        );
      return bank.create(p, input);
    },

    list: (p: Principal, f: Parameters<typeof bank.list>[1]) => bank.list(p, f),
    cancel: (p: Principal, id: string) => bank.cancel(p, id),
    reportDeposit: (p: Principal, id: string, depositorName: string | undefined) =>
      bank.reportDeposit(p, id, depositorName),
  };
}

export type OrgBankService = ReturnType<typeof orgBankService>;
