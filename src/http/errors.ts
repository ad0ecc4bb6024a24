/** The one error type: thrown anywhere, rendered in one place as {"error":{"code","message"}}. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export const notFound = (what = "resource") => new ApiError(404, "not_found", `No such ${what} for this account.`);
export const badRequest = (code: string, message: string) => new ApiError(400, code, message);
export const conflict = (code: string, message: string) => new ApiError(409, code, message);
export const authRequired = (message = "A valid bearer token is required.") => new ApiError(401, "auth_required", message);
export const scopeInsufficient = (message: string) => new ApiError(403, "scope_insufficient", message);
