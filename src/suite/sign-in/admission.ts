import type { AdmissionCheck } from "../../kernel/area.js";
import { ApiError } from "../../http/errors.js";
import { isSuiteAccount } from "./repo.js";

/**
 * org_only (spec, suite login 6): an account that signs in with the suite uses only its company's account, so a
 * creation it would own itself (the personal context) is refused; with `X-Owner: org` it creates company assets.
 */
export function orgOnlyAdmission(): AdmissionCheck {
  return async (q, request) => {
    if (request.owner.kind !== "account" || request.owner.id !== request.accountId) return;
    if (await isSuiteAccount(q, request.accountId))
      throw new ApiError(
        "org_only",
        "This account signs in with the suite and creates resources only for its organization: send X-Owner: org (the console's organization context).",
      );
  };
}
