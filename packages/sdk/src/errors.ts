/** What every failed call throws: an answer of the API, or no answer at all. */
export class PlatformError extends Error {
  /** how many times the call was retried before giving up */
  retries = 0;
}

/** The API answered with an error: `{"error":{"code","message"}}` and its HTTP status. */
export class PlatformApiError extends PlatformError {
  /** the edge's request identifiers when a CDN or proxy sits in front (cf-ray; via or server) */
  cfRay: string | null = null;
  edge: string | null = null;

  constructor(
    readonly status: number,
    /** the stable error code from the API's catalog (`scope_insufficient`, `not_found`, ...) */
    readonly code: string,
    message: string,
    readonly requestId: string | null = null,
    /** seconds the server asked to wait (Retry-After), when it said */
    readonly retryAfter: number | null = null,
    readonly method: string = "",
    readonly path: string = "",
  ) {
    super(message);
    this.name = "PlatformApiError";
  }
}

/** No answer: DNS, connection refused or reset, TLS, or the per-attempt timeout. */
export class PlatformNetworkError extends PlatformError {
  constructor(
    message: string,
    readonly cause?: unknown,
  ) {
    super(message);
    this.name = "PlatformNetworkError";
  }
}

/** An asynchronous operation ended in failure, or did not end within the time allowed. */
export class PlatformOperationError extends PlatformError {
  constructor(
    message: string,
    readonly commandId: string | null,
    readonly timedOut = false,
  ) {
    super(message);
    this.name = "PlatformOperationError";
  }
}

/** Reads an error answer into a PlatformApiError; bodies that are not the platform's shape keep their status. */
export async function apiErrorOf(response: Response, method = "", path = ""): Promise<PlatformApiError> {
  let code = `http_${response.status}`;
  let message = response.statusText || `HTTP ${response.status}`;
  try {
    const body = (await response.json()) as { error?: { code?: unknown; message?: unknown } };
    if (typeof body?.error?.code === "string") code = body.error.code;
    if (typeof body?.error?.message === "string") message = body.error.message;
  } catch {
    // not JSON: keep the status line
  }
  const error = new PlatformApiError(
    response.status,
    code,
    message,
    response.headers.get("x-request-id"),
    retryAfterSeconds(response.headers.get("retry-after")),
    method,
    path,
  );
  error.cfRay = response.headers.get("cf-ray");
  error.edge = response.headers.get("via") ?? response.headers.get("x-served-by");
  return error;
}

/** Retry-After as seconds: a number of seconds or an HTTP date. */
export function retryAfterSeconds(value: string | null, now = Date.now()): number | null {
  if (value === null || value.trim() === "") return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
}
