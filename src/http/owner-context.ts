import type { FastifyRequest, preHandlerHookHandler, RouteOptions } from "fastify";
import type { Kernel } from "../kernel/kernel.js";
import type { Queryable } from "../store/db.js";
import type { AuthRule } from "./auth-rule.js";
import { ApiError } from "./errors.js";

/**
 * Acting for an organization (README, "Organizations"): a member's request works on the organization's resources
 * (creates company assets, lists and changes them) when it says so, with the header `X-Owner: org` on any route or
 * `"owner": "org"` in the body of a create route. `me` (the default) is the caller's personal context. An
 * organization API key always acts for its organization. The switch replaces the principal's owner, so every
 * area, admission, billing and the audit row follow without knowing about organizations.
 */
export const OWNER_HEADER = "x-owner";
const CONTEXTS = ["me", "org"] as const;
type Context = (typeof CONTEXTS)[number];

export async function applyOwnerContext(
  request: FastifyRequest,
  deps: { kernel: Kernel; db: Queryable },
  wanted: Context,
): Promise<void> {
  const p = request.principal;
  if (!p) return;
  if (wanted === "me") {
    if (p.owner.kind === "org")
      throw new ApiError("forbidden_role", "An organization API key acts for its organization only, not as a person.");
    return;
  }
  if (p.owner.kind === "org") return;
  if (p.owner.kind !== "account")
    throw new ApiError("forbidden_role", "Only a personal account can act for an organization.");
  const membership = (await deps.kernel.use("orgs")?.membership(deps.db, p.accountId)) ?? null;
  if (!membership)
    throw new ApiError(
      "forbidden_role",
      "The account is not a member of an organization; create one (POST /v1/org) or accept an invitation first.",
    );
  request.principal = { ...p, owner: { kind: "org", id: membership.orgId } };
}

/** The context the X-Owner header asks for, or null; anything else than me/org is a 400 naming the header. */
export function headerContext(request: FastifyRequest): Context | null {
  const raw = request.headers[OWNER_HEADER];
  if (raw === undefined) return null;
  const value = Array.isArray(raw) ? raw[0] : raw;
  if ((CONTEXTS as readonly string[]).includes(value)) return value as Context;
  throw new ApiError("invalid_request", `header X-Owner must be "me" or "org", not "${value.slice(0, 40)}".`);
}

const isCreateRoute = (route: RouteOptions): boolean => {
  const auth = route.config?.auth as AuthRule | undefined;
  return !!auth && "scope" in auth && auth.instance === "create";
};

interface ObjectSchema {
  type?: string;
  properties?: Record<string, unknown>;
}

/**
 * At registration: create routes with a JSON object body take `owner` ("me" | "org"), documented in the OpenAPI
 * document (so the SDK and CLI have it), and a pre-handler that applies it and removes it before the service.
 */
export function ownerFieldOnCreateRoutes(deps: { kernel: Kernel; db: Queryable }) {
  const applyBodyOwner: preHandlerHookHandler = async (request) => {
    const body = request.body as Record<string, unknown> | null;
    if (!body || typeof body !== "object" || Array.isArray(body) || Buffer.isBuffer(body) || !("owner" in body)) return;
    const wanted = body.owner as Context;
    delete body.owner;
    await applyOwnerContext(request, deps, wanted);
  };
  return (route: RouteOptions): void => {
    if (!isCreateRoute(route)) return;
    const schema = route.schema as { body?: ObjectSchema } | undefined;
    const body = schema?.body;
    if (!schema || !body || body.type !== "object" || !body.properties || "owner" in body.properties) return;
    // a copy: body schemas may be shared between routes
    schema.body = {
      ...body,
      properties: {
        ...body.properties,
        owner: {
          type: "string",
          enum: [...CONTEXTS],
          description:
            'who owns what is created: "me" (default) or "org", a company asset of the caller\'s organization',
        },
      },
    };
    const list = <T>(h: T | T[] | undefined): T[] => (h === undefined ? [] : Array.isArray(h) ? h : [h]);
    route.preHandler = [applyBodyOwner, ...list(route.preHandler)];
    // "org" from someone in no organization (or an organization key asking for "me") is 403 forbidden_role
    const errors = route.config?.errors ?? [];
    if (!errors.includes("forbidden_role"))
      route.config = { ...route.config, errors: [...errors, "forbidden_role"] } as typeof route.config;
  };
}
