import { ownersWith } from "../kernel/declared-once.js";
import { PUBLISHED_ORDER } from "./error-order.js";

/** One catalog entry: the HTTP status a code answers with, and its one-line meaning. */
export type ErrorEntry = readonly [status: number, meaning: string];
/** An area's own codes (`errors` on its module, kept in src/<area>/errors.ts). */
export type ErrorTable = Readonly<Record<string, ErrorEntry>>;

/**
 * The shared codes: the request itself, authentication and scopes, admission (funds, budgets, rules, limits),
 * rate limits, not found, and the server's own failures. Codes of one area live in that area (`errors` on its
 * module) and join these at start-up into the one catalog.
 */
const SHARED_ERRORS = {
  // 400: the request itself is wrong
  invalid_request: [400, "A field, parameter or header is missing or invalid; the message names it."],
  bad_json: [400, "The body is not valid JSON."],
  bad_slug: [400, "Slug or name breaks the rule: 3-40 lowercase letters, digits and hyphens."],
  bad_size: [400, "Unknown size."],
  not_running: [400, "The operation needs a running resource."],
  invalid_scope: [400, "A requested scope is not valid."],
  unknown_department: [400, "department_code is not in the chart."],
  bad_image: [400, "The image reference is not valid."],
  destination_forbidden: [
    400,
    "The URL names a loopback, private, link-local, metadata or reserved address the platform does not call.",
  ],
  // 401
  auth_required: [401, "The bearer token is missing, invalid, expired or revoked."],
  invalid_credentials: [401, "Wrong e-mail or password."],
  // 402
  insufficient_funds: [402, "A paid resource needs a positive, settled balance."],
  budget_exceeded: [402, "An organization budget in block mode is used up."],
  // 403
  scope_insufficient: [403, "The key lacks a scope, or a scoped key called an account endpoint."],
  forbidden_role: [403, "The caller's organization role does not allow this."],
  deploy_rule_violation: [403, "An organization deploy rule forbids this."],
  image_forbidden: [403, "The image is in another owner's registry namespace."],
  // 404, 405
  not_found: [404, "No such resource or route for the caller."],
  // 409
  slug_taken: [409, "The slug is in use."],
  conflict: [409, "The resource is not in a state that allows this."],
  idempotency_in_progress: [409, "A request with this Idempotency-Key is still running."],
  invalid_state: [409, "The request is not in a state that allows this."],
  // 408-431
  request_timeout: [408, "The request was not received in time; the connection is closed."],
  payload_too_large: [413, "The request body is too large."],
  uri_too_long: [414, "The request address is too long."],
  unsupported_media_type: [415, "The body must be application/json."],
  idempotency_key_reused: [422, "The Idempotency-Key was used with another request."],
  too_many_requests: [429, "Rate limit exceeded; see Retry-After."],
  headers_too_large: [431, "The request headers are too large."],
  // 5xx
  internal: [500, "An unexpected server error; the request id identifies it in the logs."],
  provider_error: [502, "A payment or DNS provider failed."],
  provision_failed: [503, "Capacity or quota could not be obtained."],
  host_unavailable: [503, "The host holding the resource has no heartbeat; nothing was changed."],
  service_unavailable: [503, "The server is shutting down or a component is missing."],
  runtime_unavailable: [503, "The container runtime (podman) is not installed or not working on this host."],
  runtime_failed: [502, "The container runtime failed; the message says how."],
} as const satisfies ErrorTable;

/**
 * The areas' tables, as types, so `new ApiError("bucket_not_empty")` is checked at compile time like a shared
 * code: src/areas.ts names every listed area's table (`listed`, a union of them). An area may also add its own
 * with `declare module "../http/errors.js" { interface AreaErrorTables { buckets: typeof BUCKETS_ERROR_CODES } }`.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface AreaErrorTables {}

/** the codes of a table, or of each table in a union of them */
type CodesOf<T> = T extends unknown ? keyof T : never;
type AreaErrorCode = { [A in keyof AreaErrorTables]: CodesOf<AreaErrorTables[A]> }[keyof AreaErrorTables];
export type ErrorCode = keyof typeof SHARED_ERRORS | AreaErrorCode;

/**
 * The one error catalog: every code this process answers, its HTTP status and a one-line meaning; the shared
 * codes, plus each listed area's from start-up on (`declareErrorCodes`). Thrown anywhere as
 * `new ApiError(code, message)`; the code decides the status; rendered once as {"error":{"code","message"}}
 * (error-handler.ts). The OpenAPI document lists per operation the codes it can answer, and /v1/manual prints
 * this table.
 */
export const ERROR_CATALOG = { ...SHARED_ERRORS } as Record<ErrorCode, ErrorEntry>;

const SHARED_OWNER = "the shared catalog (src/http/errors.ts)";
const owners = new Map<string, string>(Object.keys(SHARED_ERRORS).map((code) => [code, SHARED_OWNER]));

/**
 * Merges areas' codes into the catalog (at start-up, from the areas list). A code two owners declare is refused,
 * naming both, before anything is merged. An area declaring its codes again (a second platform in one process)
 * is no duplicate.
 */
export function declareErrorCodes(areas: readonly { area: string; errors: ErrorTable }[]): void {
  const next = ownersWith(
    owners,
    areas.map(({ area, errors }) => ({ area, names: Object.keys(errors) })),
    "error code",
  );
  const entries = new Map<string, ErrorEntry>(Object.entries(ERROR_CATALOG));
  for (const { errors } of areas) for (const [code, entry] of Object.entries(errors)) entries.set(code, entry);
  for (const [code, owner] of next) owners.set(code, owner);
  // the published order first, then newer codes by status and name
  const rank = new Map(PUBLISHED_ORDER.map((code, i) => [code, i]));
  const ordered = [...entries].sort(
    ([a, ea], [b, eb]) =>
      (rank.get(a) ?? Infinity) - (rank.get(b) ?? Infinity) || ea[0] - eb[0] || (a < b ? -1 : a > b ? 1 : 0),
  );
  const catalog = ERROR_CATALOG as Record<string, ErrorEntry>;
  for (const code of Object.keys(catalog)) delete catalog[code];
  for (const [code, entry] of ordered) catalog[code] = entry;
}

/** A code's status; a code no listed area declared is a programming error. */
export function statusOf(code: ErrorCode): number {
  const entry = ERROR_CATALOG[code];
  if (!entry)
    throw new Error(`error code ${code} is in no catalog: is the area that declares it listed in src/areas.ts?`);
  return entry[0];
}

/** The one error type: thrown anywhere, rendered in one place as {"error":{"code","message"}}. */
export class ApiError extends Error {
  constructor(
    readonly code: ErrorCode,
    message?: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message ?? ERROR_CATALOG[code]?.[1] ?? code);
  }

  /** read from the catalog when rendered: an area's codes join it at start-up, maybe after this error was made */
  get status(): number {
    return statusOf(this.code);
  }
}

export const notFound = (what = "resource") => new ApiError("not_found", `No such ${what} for this account.`);
/** The row a lookup found, or the 404 naming what was looked for (`notFound`): a service's "find or 404" in one call. */
export function found<T>(row: T | null | undefined, what?: string): T {
  if (row === null || row === undefined) throw notFound(what);
  return row;
}
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
