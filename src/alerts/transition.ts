import { MINUTE_MS } from "./figures.js";

export type AlertState = "ok" | "pending" | "firing";

export interface RuleClock {
  state: AlertState;
  stateSince: number;
  /** firing only: since when the condition has been false */
  clearingSince: number | null;
  forMinutes: number;
}

export interface Step {
  state: AlertState;
  stateSince: number;
  clearingSince: number | null;
  /** what to tell: a firing begins or ends (at most one per evaluation) */
  notify: "fired" | "resolved" | null;
}

/**
 * One evaluation of a rule: `ok` → `pending` when the condition holds, → `firing` once it has held `for_minutes`
 * (at once when 0); a pending rule whose condition fails goes back to ok silently. A firing rule resolves only once
 * the condition has been false for `for_minutes` too, and at least one minute (two evaluations in a row), so a value
 * hovering at the threshold fires once and stays firing rather than storming; a true evaluation while clearing
 * restarts that count.
 */
export function step(rule: RuleClock, conditionHolds: boolean, now: number): Step {
  const holdMs = rule.forMinutes * MINUTE_MS;
  const unchanged: Step = { ...rule, notify: null };
  switch (rule.state) {
    case "ok":
      if (!conditionHolds) return unchanged;
      return holdMs === 0
        ? { state: "firing", stateSince: now, clearingSince: null, notify: "fired" }
        : { state: "pending", stateSince: now, clearingSince: null, notify: null };
    case "pending":
      if (!conditionHolds) return { state: "ok", stateSince: now, clearingSince: null, notify: null };
      return now - rule.stateSince >= holdMs
        ? { state: "firing", stateSince: now, clearingSince: null, notify: "fired" }
        : unchanged;
    case "firing": {
      if (conditionHolds) return { ...unchanged, clearingSince: null };
      const clearingSince = rule.clearingSince ?? now;
      return now - clearingSince >= Math.max(holdMs, MINUTE_MS)
        ? { state: "ok", stateSince: now, clearingSince: null, notify: "resolved" }
        : { ...unchanged, clearingSince };
    }
  }
}
