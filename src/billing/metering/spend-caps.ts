import type { Queryable } from "../../store/db.js";
import type { AdmissionCheck, AdmissionRequest } from "../../kernel/area.js";
import { ApiError } from "../../http/errors.js";
import { spendCapsOf } from "../../accounts/public.js";
import { krw, monthBounds } from "./reports.js";
import { spentMicro } from "./repo.js";

export interface CapDefaults {
  defaultAccountSpendCapKrw: number;
  defaultAppSpendCapKrw: number;
}

/**
 * Billing's spend-cap check (kernel.admit): growth of a running app (`growth`, an autoscaled group adding
 * a member) is refused with 402 spend_cap_reached once the owner's month-to-date spend reached the
 * acting account's account spend cap, or the app's own spend (its metered resources) reached the app
 * spend cap: the caps the billing summary shows, the account's setting or the platform default. Plain
 * creations are not growth and pass; what runs is never stopped here.
 */
export function spendCapCheck(defaults: CapDefaults, now: () => Date = () => new Date()): AdmissionCheck {
  return async (q: Queryable, r: AdmissionRequest) => {
    if (!r.growth) return;
    const caps = await spendCapsOf(q, defaults, r.accountId);
    const accountCap = caps?.account_spend_cap_krw ?? defaults.defaultAccountSpendCapKrw;
    const appCap = caps?.app_spend_cap_krw ?? defaults.defaultAppSpendCapKrw;
    const { start, end } = monthBounds(now());
    const used = krw(await spentMicro(q, r.owner, start, end, null));
    if (used >= accountCap)
      throw new ApiError(
        "spend_cap_reached",
        `The account spend cap is reached (${used} of ${accountCap} KRW this month); running replicas stay, growth stops.`,
      );
    const ids = r.meteredIds ?? (r.resourceId ? [r.resourceId] : []);
    if (!ids.length) return;
    const appUsed = krw(await spentMicro(q, r.owner, start, end, ids));
    if (appUsed >= appCap)
      throw new ApiError(
        "spend_cap_reached",
        `The app spend cap is reached (${appUsed} of ${appCap} KRW this month); running replicas stay, growth stops.`,
      );
  };
}
