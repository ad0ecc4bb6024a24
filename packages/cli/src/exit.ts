import { PlatformApiError, PlatformNetworkError, PlatformOperationError } from "@hosting-platform/sdk";

/**
 * Exit codes, so scripts can tell failures apart:
 *   0 success, 1 the API refused (an error answer), 2 usage (bad arguments, not logged in),
 *   3 network (no answer), 4 an asynchronous operation failed or timed out, 70 a bug in the CLI,
 *   127 psql not found (db connect).
 */
export const EXIT = { ok: 0, api: 1, usage: 2, network: 3, operation: 4, internal: 70, notFound: 127 } as const;

/** A mistake of the caller's: printed as is, exit 2, never reported. */
export class UsageError extends Error {}

/** A failure with its own exit code and no report (psql missing). */
export class ExitError extends Error {
  constructor(
    message: string,
    readonly code: number,
  ) {
    super(message);
  }
}

export function exitCodeOf(err: unknown): number {
  if (err instanceof UsageError) return EXIT.usage;
  if (err instanceof ExitError) return err.code;
  if (err instanceof PlatformApiError) return EXIT.api;
  if (err instanceof PlatformNetworkError) return EXIT.network;
  if (err instanceof PlatformOperationError) return EXIT.operation;
  return EXIT.internal;
}
