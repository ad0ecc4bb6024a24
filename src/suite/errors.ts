import type { ErrorTable } from "../http/errors.js";

/** The suite's error codes (README.md here): code → [HTTP status, one-line meaning]; merged into the one catalog. */
export const SUITE_ERROR_CODES = {
  suite_sign_in_failed: [400, "The suite sign-in could not be finished (expired or unknown state, refused code)."],
  suite_login_required: [402, "A suite-billed member needs a valid suite login; sign in with the suite again."],
  suite_usage_exhausted: [402, "The member's suite allowance is used up until it resets."],
  org_only: [403, "An account that signs in with the suite creates resources only in its organization's context."],
  suite_setup_pending: [
    403,
    "The organization's suite setup is not finished; staff sign-in is held until an admin finishes it.",
  ],
  suite_join_department: [403, "The join policy admits only staff of chosen suite departments."],
  suite_join_invite: [403, "The join policy admits only staff an admin invited by e-mail."],
  suite_not_linked: [403, "The suite company is not linked to an organization; its enterprise admin signs in first."],
  suite_unavailable: [503, "The suite's API did not answer or refused; nothing was changed, try again."],
  suite_not_configured: [503, "The platform has no suite configured (SUITE_ISSUER)."],
} as const satisfies ErrorTable;
