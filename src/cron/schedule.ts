import parser from "cron-parser";
import { ApiError } from "../http/errors.js";

/**
 * Cron syntax (5 fields, or 6 with seconds as cron-parser reads them; `@hourly` style macros too) evaluated in an
 * IANA time zone, so "0 9 * * *" in Asia/Seoul fires at 09:00 Seoul time across DST changes elsewhere.
 */
export function checkSchedule(schedule: string, timeZone: string): void {
  try {
    new Intl.DateTimeFormat("en", { timeZone });
  } catch {
    throw new ApiError("bad_schedule", `Unknown time zone "${timeZone}"; use an IANA name like "UTC" or "Asia/Seoul".`);
  }
  if (schedule.trim().split(/\s+/).length > 6) throw new ApiError("bad_schedule", `"${schedule}" has too many fields.`);
  try {
    parser.parseExpression(schedule, { tz: timeZone }).next();
  } catch (err) {
    throw new ApiError("bad_schedule", `"${schedule}" is not a cron schedule: ${(err as Error).message}`);
  }
}

/** The first scheduled instant strictly after `after`. */
export function nextRunAfter(schedule: string, timeZone: string, after: Date): Date {
  return parser.parseExpression(schedule, { tz: timeZone, currentDate: after }).next().toDate();
}
