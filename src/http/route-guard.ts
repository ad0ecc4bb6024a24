import type { FastifyRequest } from "fastify";
import type { Capabilities } from "../kernel/capabilities.js";

/**
 * A rule an area enforces on routes beyond scope and organization role: the partner area's "the caller is a partner
 * acting for itself", billing's "in the company context the wallet is for admins". The area provides it as a
 * capability (kernel.provide in its setup, typed in its contract.ts) and names it on its scope resource
 * (`{ partner: { instances: false, guard: "partnerAccount" } }`), so every route acting under that resource has it,
 * in whatever order it is registered; a route may also name one itself (`guard` in the route declaration, route.ts).
 * The one authorizer (authenticate.ts) asks it after the scope, the role and the company-asset rule, before the body
 * is read; it throws an ApiError to refuse. A route with a guard no listed area provides stops start-up.
 */
export interface RouteGuard {
  check(request: FastifyRequest): Promise<void>;
}

/** The capabilities that are route guards: what a route may name in `guard`. */
export type RouteGuardName = {
  [N in keyof Capabilities]: Capabilities[N] extends RouteGuard ? N : never;
}[keyof Capabilities];
