import type { Action, Resource } from "../auth/scopes.js";

/**
 * Every route declares who may call it, once, beside its schema (route option `config.auth`).
 * - public: no token
 * - token: any valid token, full-access or scoped
 * - account: full-access tokens only (spec: "account" endpoints, /me, /auth, /api-keys)
 * - scope: a scoped key needs resource:action; `instance` says how instance-limited keys apply:
 *     { param }  the route acts on the instance named by that path parameter (id or slug)
 *     "list"     the handler narrows the list to the permitted instances
 *     "create"   creation or bulk: instance-limited keys are refused
 *   resources that are not instance-limited omit it.
 * - operator / fleet: the platform operator's bearer secrets, never a user token
 */
export type AuthRule =
  | { public: true }
  | { token: true }
  | { account: true }
  | { scope: `${Resource}:${Action}`; instance?: { param: string } | "list" | "create" }
  | { operator: true }
  | { fleet: true };

export function describeAuth(rule: AuthRule): string {
  if ("public" in rule) return "public (no token)";
  if ("token" in rule) return "any valid token";
  if ("account" in rule) return "account (full-access token; scoped keys refused)";
  if ("operator" in rule) return "operator token";
  if ("fleet" in rule) return "fleet token";
  const inst = rule.instance;
  const suffix =
    inst === undefined
      ? ""
      : inst === "list"
        ? " (instance keys see their instances)"
        : inst === "create"
          ? " (instance keys refused)"
          : ` (or ${rule.scope}:{${inst.param}})`;
  return `scope ${rule.scope}${suffix}`;
}
