import type { FastifyInstance, FastifyRequest } from "fastify";
import type { TokenResolver } from "../auth/token-resolver.js";
import { coverage, guardOfResource, type Action, type Resource } from "../auth/scopes.js";
import type { RouteGuardName } from "./route-guard.js";
import { secretsEqual } from "../auth/secrets.js";
import { ApiError, authRequired, scopeInsufficient } from "./errors.js";
import type { Kernel } from "../kernel/kernel.js";
import type { AuthRule } from "./auth-rule.js";
import { isStorable } from "./storable.js";
import { sessionToken } from "./session-cookie.js";
import { applyOwnerContext, headerContext } from "./owner-context.js";
import type { Queryable } from "../store/db.js";

export interface AuthDeps {
  tokens: TokenResolver;
  kernel: Kernel;
  db: Queryable;
  operatorToken: string;
  fleetToken: string | null;
}

function bearer(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (!header) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m ? m[1] : null;
}

/** Step one (before rate limiting): who is calling. Never rejects; authorize() decides. */
export async function identify(request: FastifyRequest, deps: AuthDeps): Promise<void> {
  request.principal = null;
  request.instanceFilter = null;
  request.callerKey = `ip:${request.ip}`;
  const rule = request.routeOptions.config.auth;
  const given = bearer(request);
  if (!rule || "public" in rule) return;
  if ("operator" in rule || "fleet" in rule) {
    if (!given) return;
    // only the real secret earns the shared bucket; wrong guesses are limited by address and cannot lock the operator out
    const expected = "operator" in rule ? deps.operatorToken : deps.fleetToken;
    if (expected && secretsEqual(given, expected)) request.callerKey = "operator" in rule ? "operator" : "fleet";
    return;
  }
  // no Authorization header: the console's session cookie, only with its CSRF proof on state-changing requests
  const session = given ? null : sessionToken(request);
  const secret = given ?? (session && "token" in session ? session.token : null);
  if (!secret) return;
  request.principal = await deps.tokens.resolve(secret);
  if (request.principal) request.callerKey = `acct:${request.principal.accountId}`;
}

/**
 * Step two: apply the route's declared rule and organization role, then the company-asset rule to changes, then the
 * guard of the area the route names (route-guard.ts). All before the body is read.
 */
export async function authorize(request: FastifyRequest, deps: AuthDeps): Promise<void> {
  await authorizeRule(request, deps);
  await authorizeOrgRole(request, deps);
  await mayChangeInstance(request, deps);
  await authorizeGuard(request, deps);
}

/** The route's guard, asked through the kernel (start-up refused a guard no area provides). */
async function authorizeGuard(request: FastifyRequest, deps: AuthDeps): Promise<void> {
  const name = request.routeOptions.config.guard;
  if (name) await deps.kernel.require(name).check(request);
}

/**
 * `orgRole` (the /v1/org routes): not a member → 404 (the caller has no organization to see), below the role → 403
 * forbidden_role. The principal then acts for the organization, so services, admission and the audit row follow it.
 * An organization API key acts with its issuer's role, at most admin (owner-only rows are account rows, which keys
 * cannot call), and only while the issuer is still a member. Checked before the body is read, like the scope.
 */
async function authorizeOrgRole(request: FastifyRequest, deps: AuthDeps): Promise<void> {
  const needed = request.routeOptions.config.orgRole;
  const p = request.principal;
  if (!needed || !p) return;
  const orgs = deps.kernel.use("orgs");
  const m = await orgs?.membership(deps.db, p.accountId);
  const own = m && (p.owner.kind !== "org" || p.owner.id === m.orgId);
  if (!orgs || !m || !own) throw new ApiError("not_found", "The caller is not a member of an organization.");
  const role = p.owner.kind === "org" && m.role === "owner" ? "admin" : m.role;
  if (!orgs.roleAtLeast(role, needed))
    throw new ApiError("forbidden_role", `This needs the organization role ${needed}; the caller is ${role}.`);
  request.org = { ...m, role, byOrganizationKey: p.owner.kind === "org" };
  if (p.owner.kind !== "org") request.principal = { ...p, owner: { kind: "org", id: m.orgId } };
}

/**
 * A change (any method but GET/HEAD) to the instance a write route names, in the company context: the caller must
 * be allowed to manage that company asset (kernel.assertMayChange: its responsible member, an admin or the owner).
 * One check here covers every area's instance routes; instances named in bodies are checked by their services.
 */
async function mayChangeInstance(request: FastifyRequest, deps: AuthDeps): Promise<void> {
  const rule = request.routeOptions.config.auth as AuthRule | undefined;
  const p = request.principal;
  if (!p || p.owner.kind !== "org" || !rule || !("scope" in rule) || typeof rule.instance !== "object") return;
  if (request.method === "GET" || request.method === "HEAD") return;
  const [resource, action] = rule.scope.split(":") as [Resource, Action];
  if (action !== "write") return;
  const ref = (request.params as Record<string, string>)[rule.instance.param];
  if (ref && isStorable(ref)) await deps.kernel.assertMayChange(deps.db, resource, p, ref);
}

async function authorizeRule(request: FastifyRequest, deps: AuthDeps): Promise<void> {
  const rule = request.routeOptions.config.auth as AuthRule | undefined;
  if (!rule) return; // only the not-found handler has no rule
  if ("public" in rule) return;
  if ("operator" in rule) return checkSecret(request, deps.operatorToken, "operator");
  if ("fleet" in rule) return checkSecret(request, deps.fleetToken, "fleet");

  if (!request.principal) throw authRequired(unauthenticatedReason(request));
  const context = headerContext(request);
  if (context) await applyOwnerContext(request, deps, context);
  const principal = request.principal;
  if ("token" in rule) return;
  if ("account" in rule) {
    if (principal.kind !== "full")
      throw scopeInsufficient("This endpoint needs a full-access account token; scoped keys cannot call it.");
    return;
  }
  if (principal.kind === "full") return;

  const [resource, action] = rule.scope.split(":") as [Resource, Action];
  const cov = coverage(principal.grants, resource, action);
  const lacking = `This key lacks the scope ${rule.scope}.`;
  if (cov.kind === "none") throw scopeInsufficient(lacking);
  if (cov.kind === "all") return;

  const mode = rule.instance;
  if (mode === "list") {
    request.instanceFilter = cov.refs;
    return;
  }
  if (mode === undefined || mode === "create") {
    throw scopeInsufficient(
      `This key is limited to single ${resource} instances and cannot ${mode === "create" ? "create or act in bulk" : "call this endpoint"}; it needs ${rule.scope}.`,
    );
  }
  const ref = (request.params as Record<string, string>)[mode.param];
  // a ref PostgreSQL cannot hold (NUL, unpaired surrogate) names no instance the key could cover
  if (!ref || !isStorable(ref) || !(await deps.kernel.permits(resource, principal.owner, ref, cov.refs))) {
    throw scopeInsufficient(`This key does not cover ${resource} instance "${ref}"; it needs ${rule.scope}.`);
  }
}

function unauthenticatedReason(request: FastifyRequest): string | undefined {
  if (bearer(request)) return "The token is invalid, expired or revoked.";
  const session = sessionToken(request);
  if (session && "csrfMissing" in session)
    return "The console session needs the X-Platform-CSRF header repeating the platform_csrf cookie on this request.";
  if (session) return "The console session has expired or was signed out; sign in again.";
  return undefined;
}

function checkSecret(request: FastifyRequest, expected: string | null, what: string): void {
  const given = bearer(request);
  if (!given) throw authRequired(`The ${what} token is required.`);
  if (!expected || !secretsEqual(given, expected)) throw new ApiError("auth_required", `The ${what} token is invalid.`);
}

/**
 * Fails start-up if any route was registered without an auth declaration, or declares an organization role on a
 * platform without the organizations area, or a guard no area provides (nothing could enforce them).
 */
export function requireAuthDeclarations(app: FastifyInstance, kernel: Kernel): void {
  app.addHook("onRoute", (route) => {
    if (!route.config || !(route.config as { auth?: unknown }).auth) {
      throw new Error(`route ${route.method} ${route.url} has no auth declaration`);
    }
    if (route.config.orgRole && !kernel.use("orgs"))
      throw new Error(`route ${route.method} ${route.url} declares orgRole, but no organizations area is listed`);
    // a route under a resource whose area declares a guard names it unless it names its own (auth/scopes.ts)
    const rule = route.config.auth;
    const byResource = rule && "scope" in rule ? guardOfResource(rule.scope.split(":")[0]) : undefined;
    if (!route.config.guard && byResource) route.config = { ...route.config, guard: byResource as RouteGuardName };
    const guard = route.config.guard;
    if (guard && !kernel.use(guard))
      throw new Error(`route ${route.method} ${route.url} declares the guard ${guard}, but no listed area provides it`);
  });
}
