import { badRequest } from "./errors.js";

/**
 * A keyset cursor on a bigint sequence (the id or seq of the last row an endpoint returned), checked before it
 * reaches SQL, so a made-up one is a 400 rather than a cast error. Undefined (the first page) is null.
 */
export function sequenceCursor(cursor: string | undefined): string | null {
  if (cursor !== undefined && !/^\d{1,18}$/.test(cursor))
    throw badRequest("invalid_request", "cursor is not one this endpoint returned.");
  return cursor ?? null;
}

/**
 * One page from `limit + 1` rows read in page order: the extra row is not answered, it only says a next page exists,
 * whose cursor is the last answered row's.
 */
export function keysetPage<R, T>(
  rows: R[],
  limit: number,
  view: (row: R) => T,
  cursorOf: (row: R) => string,
): { items: T[]; next_cursor: string | null } {
  const page = rows.slice(0, limit);
  return { items: page.map(view), next_cursor: rows.length > limit ? cursorOf(page[page.length - 1]) : null };
}
