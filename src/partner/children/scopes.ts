/**
 * What a child token may carry (spec, Partner features 1: least privilege, never full access, never partner scope):
 * resource scopes of the child's own resources only. Never `*`, `partner`, `org` (acting for an organization),
 * `linked-apps`, or billing writes (top-ups come from the partner: POST /v1/partner/users/{id}/credit).
 */
import { ApiError } from "../../http/errors.js";
import { coverage, parseScope, type Action, type Grant } from "../../auth/scopes.js";

const CHILD_RESOURCES = [
  "pods",
  "databases",
  "volumes",
  "static",
  "backups",
  "pod-templates",
  "domains",
  "sandboxes",
  "buckets",
  "registry",
  "builds",
] as const;

/** the ceiling when the partner set none: every child resource, read and write, and billing read */
export const DEFAULT_CHILD_SCOPES: readonly string[] = [...CHILD_RESOURCES.map((r) => `${r}:*`), "billing:read"];

export const DEFAULT_TOKEN_DAYS = 30;
export const MAX_TOKEN_DAYS = 365;

/** A scope a child could ever hold, whatever the partner allows. */
function childMayHold(g: Grant): boolean {
  if (g.resource === "*") return false;
  if (g.resource === "billing") return g.action === "read";
  return (CHILD_RESOURCES as readonly string[]).includes(g.resource);
}

/** 400 invalid_scope for a ceiling naming a scope no child may hold (PATCH /v1/partner child_scopes). */
export function checkCeiling(scopes: string[]): string[] {
  const bad = scopes.filter((s) => {
    const g = parseScope(s);
    return !g || g.instance !== null || !childMayHold(g);
  });
  if (bad.length)
    throw new ApiError(
      "invalid_scope",
      `child_scopes may name only child resource scopes (no *, partner, org, linked-apps, billing:write, instances): ${bad.join(", ")}.`,
    );
  return [...new Set(scopes)];
}

/** 400 invalid_scope unless every scope parses, a child may hold it and the partner's ceiling covers it. */
export function checkChildScopes(scopes: string[], ceiling: readonly string[]): string[] {
  const allowed = ceiling.map(parseScope).filter((g): g is Grant => g !== null);
  const refused = scopes.filter((s) => {
    const g = parseScope(s);
    if (!g || !childMayHold(g)) return true;
    const actions: Action[] = g.action === "*" ? ["read", "write"] : [g.action];
    return actions.some((a) => coverage(allowed, g.resource as Exclude<Grant["resource"], "*">, a).kind !== "all");
  });
  if (refused.length)
    throw new ApiError(
      "invalid_scope",
      `A child token carries only child resource scopes within the partner's child_scopes (never *, partner, org or billing:write): ${refused.join(", ")}.`,
    );
  return [...new Set(scopes)];
}

/** The expiry of a child token: now + days (default 30, at most 365). */
export function tokenExpiry(days: number | undefined, now = Date.now()): Date {
  return new Date(now + (days ?? DEFAULT_TOKEN_DAYS) * 86_400_000);
}
