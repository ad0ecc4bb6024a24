/**
 * The one error catalog: every error code the API answers, its HTTP status and a one-line meaning.
 * Thrown anywhere as `new ApiError(code, message)`; the code decides the status; rendered once as
 * {"error":{"code","message"}} (error-handler.ts). The OpenAPI document lists per operation the codes
 * it can answer, and /v1/manual prints this table.
 */
export const ERROR_CATALOG = {
  // 400: the request itself is wrong
  invalid_request: [400, "A field, parameter or header is missing or invalid; the message names it."],
  bad_json: [400, "The body is not valid JSON."],
  bad_slug: [400, "Slug or name breaks the rule: 3-40 lowercase letters, digits and hyphens."],
  bad_size: [400, "Unknown size."],
  bad_version: [400, "PostgreSQL version must be 16 or 17."],
  bad_time: [400, "Restore time is not RFC 3339."],
  out_of_retention: [400, "Restore time is outside the retention window."],
  future_time: [400, "Restore time is in the future."],
  stop_not_supported: [400, "Only dev databases can be stopped."],
  not_running: [400, "The operation needs a running resource."],
  not_stopped: [400, "The operation needs a stopped resource."],
  bad_cidr: [400, "An allowlist entry is not a valid CIDR."],
  extension_not_allowed: [400, "The extension is not on the allow-list."],
  ha_not_enabled: [400, "High availability is not enabled."],
  ha_not_supported: [400, "High availability is not available for this size."],
  invalid_scope: [400, "A requested scope is not valid."],
  current_password_required: [400, "Changing the password needs the current one."],
  amount_out_of_range: [400, "The amount is outside the allowed limits."],
  currency_not_supported: [400, "The provider does not take this currency."],
  card_required: [400, "No saved card."],
  invalid_payment_key: [400, "The payment key is not valid."],
  invalid_payment_method: [400, "The payment method is not valid."],
  payment_key_required: [400, "The payment key is required."],
  payment_rejected: [400, "The provider rejected the payment."],
  invalid_signature: [400, "The webhook signature does not verify."],
  auth_key_required: [400, "The card authorization key is required."],
  invalid_auth_key: [400, "The card authorization key is not valid."],
  bank_transfer_unavailable: [400, "Bank transfers are not configured."],
  invalid_business_number: [400, "The business registration number is not valid."],
  tax_invoice_required: [400, "A tax invoice request needs business information."],
  unknown_department: [400, "department_code is not in the chart."],
  tenant_required: [400, "Locking a site needs a tenant_ref."],
  bad_image: [400, "The image reference is not valid."],
  bad_archive: [400, "The upload is not a usable tar, tar.gz or zip archive; the message names the entry."],
  destination_forbidden: [
    400,
    "The URL names a loopback, private, link-local, metadata or reserved address the platform does not call.",
  ],
  // 401
  auth_required: [401, "The bearer token is missing, invalid, expired or revoked."],
  invalid_credentials: [401, "Wrong e-mail or password."],
  // 402
  insufficient_funds: [402, "A paid resource needs a positive, settled balance."],
  payment_failed: [402, "The card was declined."],
  budget_exceeded: [402, "An organization budget in block mode is used up."],
  partner_monthly_limit: [402, "The partner's monthly limit is exceeded."],
  partner_child_monthly_limit: [402, "The end user's monthly cap is reached."],
  suite_login_required: [402, "A suite-billed member needs a suite login."],
  suite_usage_exhausted: [402, "The suite allowance is used up."],
  spend_cap_reached: [402, "The account or app spend cap is reached; running replicas stay, growth stops."],
  // 403
  scope_insufficient: [403, "The key lacks a scope, or a scoped key called an account endpoint."],
  wrong_password: [403, "The current password is wrong."],
  signup_closed: [403, "Sign-up is closed on this platform."],
  forbidden_role: [403, "The caller's organization role does not allow this."],
  org_only: [403, "Suite-login users create resources only in the company context."],
  deploy_rule_violation: [403, "An organization deploy rule forbids this."],
  onprem_approval_required: [403, "On-premises access is not approved yet."],
  download_expired: [403, "The download address has expired or was altered; ask for a new one."],
  image_forbidden: [403, "The image is in another owner's registry namespace."],
  partner_required: [403, "The endpoint needs a partner account's own token or key (not a child key)."],
  department_deploy_blocked: [403, "The end user's partner department (or a parent) blocks new deployments."],
  // 404, 405
  not_found: [404, "No such resource or route for the caller."],
  // 409
  slug_taken: [409, "The slug is in use."],
  email_taken: [409, "The e-mail address has an account."],
  conflict: [409, "The resource is not in a state that allows this."],
  database_removed: [409, "The database was deleted; restore it first."],
  still_creating: [409, "The resource is still being created."],
  not_restorable: [409, "The resource cannot be restored."],
  credentials_already_revealed: [409, "The one-time reveal was used."],
  idempotency_in_progress: [409, "A request with this Idempotency-Key is still running."],
  invalid_state: [409, "The request is not in a state that allows this."],
  deposit_reported: [409, "The deposit was already reported."],
  too_many_pending: [409, "Too many pending requests."],
  topup_not_pending: [409, "The top-up is no longer pending."],
  payment_key_mismatch: [409, "The payment key does not match the top-up."],
  card_save_in_progress: [409, "A card is being saved."],
  domain_in_use: [409, "The domain's app still exists."],
  domain_taken: [409, "The domain is registered already (one domain belongs to one app platform-wide)."],
  host_in_use: [409, "A pod runs on the host."],
  volume_in_use: [409, "The volume is attached to a pod."],
  bucket_not_empty: [409, "The bucket holds objects or uploads; delete them first or pass ?force=1."],
  not_uploaded: [409, "The deployment has no files yet; upload them first."],
  idempotency_conflict: [409, "A ledger posting with this key has other content."],
  // 408-431
  terms_required: [412, "The current on-premises terms are not accepted."],
  request_timeout: [408, "The request was not received in time; the connection is closed."],
  payload_too_large: [413, "The request body is too large."],
  uri_too_long: [414, "The request address is too long."],
  unsupported_media_type: [415, "The body must be application/json."],
  idempotency_key_reused: [422, "The Idempotency-Key was used with another request."],
  too_many_requests: [429, "Rate limit exceeded; see Retry-After."],
  report_limit_exceeded: [429, "Too many CLI error reports in 24 hours."],
  quota_exceeded: [429, "A department's concurrent-run limit is reached."],
  headers_too_large: [431, "The request headers are too large."],
  // 5xx
  internal: [500, "An unexpected server error; the request id identifies it in the logs."],
  restore_not_ready: [501, "Restore is not enabled on this platform."],
  provider_error: [502, "A payment or DNS provider failed."],
  provision_failed: [503, "Capacity or quota could not be obtained."],
  rotation_failed: [503, "The password could not be applied."],
  host_unavailable: [503, "The host holding the resource has no heartbeat; nothing was changed."],
  pool_unavailable: [503, "Connection pooling is not installed on this host."],
  provider_unavailable: [503, "The payment provider is not configured."],
  webhook_not_configured: [503, "The webhook secret is not configured."],
  service_unavailable: [503, "The server is shutting down or a component is missing."],
  runtime_unavailable: [503, "The container runtime (podman) is not installed or not working on this host."],
  runtime_failed: [502, "The container runtime failed; the message says how."],
  registry_unavailable: [503, "The image registry (docker-registry) is not installed or not running."],
  builder_unavailable: [503, "The image builder (buildah) is not installed or not working on this host."],
} as const satisfies Record<string, readonly [number, string]>;

export type ErrorCode = keyof typeof ERROR_CATALOG;

export const statusOf = (code: ErrorCode): number => ERROR_CATALOG[code][0];

/** The one error type: thrown anywhere, rendered in one place as {"error":{"code","message"}}. */
export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string = ERROR_CATALOG[code][1],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.status = statusOf(code);
  }
}

export const notFound = (what = "resource") => new ApiError("not_found", `No such ${what} for this account.`);
export const badRequest = (code: ErrorCode, message: string) => new ApiError(code, message);
export const conflict = (code: ErrorCode, message: string) => new ApiError(code, message);
export const authRequired = (message = "A valid bearer token is required.") => new ApiError("auth_required", message);
export const scopeInsufficient = (message: string) => new ApiError("scope_insufficient", message);

/** Errors of lower layers (ledger, providers) say which catalog entry they are; the handler renders that. */
export interface MapsToApiError {
  toApiError(): ApiError;
}

export function asApiError(err: unknown): ApiError | null {
  if (err instanceof ApiError) return err;
  const m = err as Partial<MapsToApiError> | null;
  return m && typeof m.toApiError === "function" ? m.toApiError() : null;
}
