/** Sizes of the chart's inputs: one request carries a whole HR export (README.md, "Departments and HR syncs"). */

export const MAX_CODE = 100;
export const MAX_NAME = 200;
/** departments in one sync or CSV */
export const MAX_DEPARTMENTS = 20_000;
/** members in one sync or CSV */
export const MAX_MEMBERS = 50_000;
/** characters of one CSV text (raw text/csv or {"csv": ...}) */
export const MAX_CSV_CHARS = 8 * 1024 * 1024;
/** bytes of one request body of these routes (the platform's default BODY_LIMIT_BYTES is 1 MiB) */
export const SYNC_BODY_LIMIT = 16 * 1024 * 1024;

/** a department code: no control characters, no white space at either end */
export const CODE_PATTERN = "^[^\\s\\p{Cc}](?:[^\\p{Cc}]*[^\\s\\p{Cc}])?$";
export const EMAIL_PATTERN = "^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$";
