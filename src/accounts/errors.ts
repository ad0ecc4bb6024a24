import type { ErrorTable } from "../http/errors.js";

/** The error codes of accounts (sign-up, passwords, e-mail): code → [HTTP status, one-line meaning]; merged into the one catalog at start-up. */
export const ACCOUNTS_ERROR_CODES = {
  current_password_required: [400, "Changing the password needs the current one."],
  wrong_password: [403, "The current password is wrong."],
  signup_closed: [403, "Sign-up is closed on this platform."],
  email_taken: [409, "The e-mail address has an account."],
} as const satisfies ErrorTable;
