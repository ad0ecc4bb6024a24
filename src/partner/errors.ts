import type { ErrorTable } from "../http/errors.js";

/** The error codes of the partner area: code → [HTTP status, one-line meaning]; merged into the one catalog at start-up. */
export const PARTNER_ERROR_CODES = {
  tenant_required: [400, "Locking a site needs a tenant_ref."],
  partner_monthly_limit: [402, "The partner's monthly limit is exceeded."],
  partner_child_monthly_limit: [402, "The end user's monthly cap is reached."],
  partner_required: [403, "The endpoint needs a partner account's own token or key (not a child key)."],
  department_deploy_blocked: [403, "The end user's partner department (or a parent) blocks new deployments."],
  quota_exceeded: [429, "A department's concurrent-run limit is reached."],
} as const satisfies ErrorTable;
