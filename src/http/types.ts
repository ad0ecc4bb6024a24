import type { Principal, InstanceFilter } from "../auth/principal.js";
import type { AuthRule } from "./auth-rule.js";
import type { ErrorCode } from "./errors.js";
import type { Capabilities } from "../kernel/capabilities.js";
import type { RouteGuardName } from "./route-guard.js";

/** the organizations capability's membership (orgs/contract.ts), named through the kernel: http names no area */
type OrgMembership = NonNullable<Awaited<ReturnType<Capabilities["orgs"]["membership"]>>>;

declare module "fastify" {
  interface FastifyContextConfig {
    /** Who may call the route; required on every route. */
    auth?: AuthRule;
    /** Maps a failing body/query field to the spec's error code, e.g. {"/slug": "bad_slug"}. */
    validationCodes?: Record<string, string>;
    /** Korean one-line summary for the manual (?lang=ko). */
    summaryKo?: string;
    /** set on mutating routes at registration: the lowest 2xx of the response schema, recorded in the audit row */
    successStatus?: number;
    /** catalog codes the route can answer beyond the common ones (auth, validation, rate limit); listed in OpenAPI */
    errors?: ErrorCode[];
    /** /v1/org routes: the organization role the caller needs (http/authenticate.ts enforces it; 403 forbidden_role) */
    orgRole?: "member" | "admin" | "owner";
    /** the answer never ends (Server-Sent Events; route.ts `streams`) */
    streams?: boolean;
    /** an area's rule on who may call the route (route-guard.ts); http/authenticate.ts asks it through the kernel */
    guard?: RouteGuardName;
    /** the route creates or grows billable resources: it can answer every admission refusal (route.ts) */
    admits?: boolean;
  }
  interface FastifyRequest {
    principal: Principal | null;
    /** Set on "list" routes for instance-limited keys: the ids or slugs they may see. */
    instanceFilter: InstanceFilter;
    /** Identity for rate limiting and idempotency: the account, or the operator, or the client address. */
    callerKey: string;
    /** set on routes that declare `orgRole`: the caller's membership (role capped at admin for keys) */
    org?: OrgMembership & {
      /** the caller is an organization API key (the principal acts for the organization either way) */
      byOrganizationKey: boolean;
    };
  }
}
