/**
 * Scope grammar (spec, Authentication): `*`, `resource:read|write|*`, and for the instance-limited
 * resources `resource:action:{id|slug}`. A write grant includes read on the same resource.
 */
import { ownersWith } from "../kernel/declared-once.js";

/** What a resource admits: `instances` for the instance-limited ones, which take `resource:action:{id|slug}`. */
export interface ScopeResource {
  instances: boolean;
  /**
   * The route guard (http/route-guard.ts, a capability the area provides) every route acting under this resource
   * names unless it names its own: the area's rule on who may call them, declared once for all its routes.
   */
  guard?: string;
  /** the codes the guard refuses with: every route under the resource documents them (http/route-schema.ts) */
  guardErrors?: readonly string[];
}
/** An area's own scope resources (`scopes` on its module, kept in src/<area>/scopes.ts). */
export type ScopeTable = Readonly<Record<string, ScopeResource>>;

/**
 * The areas' scope resources, as types, so `scope: "buckets:write"` is checked at compile time: src/areas.ts
 * names every listed area's table (`listed`, a union of them). An area may also add its own with
 * `declare module "../auth/scopes.js" { interface AreaScopeTables { buckets: typeof BUCKETS_SCOPES } }`.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface AreaScopeTables {}

/** Shared resources no one area owns: none today; every resource belongs to the area that serves it. */
const SHARED_RESOURCES = {} as const satisfies ScopeTable;

/** the resources of a table, or of each table in a union of them */
type ResourcesOf<T> = T extends unknown ? keyof T & string : never;
type AreaResource = { [A in keyof AreaScopeTables]: ResourcesOf<AreaScopeTables[A]> }[keyof AreaScopeTables];
export type Resource = keyof typeof SHARED_RESOURCES | AreaResource;

/** The resources scopes may name: the shared ones, plus each listed area's from start-up on (`declareScopeResources`). */
export const RESOURCES: readonly Resource[] = Object.keys(SHARED_RESOURCES) as Resource[];
export const INSTANCE_LIMITED: ReadonlySet<string> = new Set(
  Object.entries(SHARED_RESOURCES as ScopeTable).flatMap(([r, s]) => (s.instances ? [r] : [])),
);
const owners = new Map<string, string>(RESOURCES.map((r) => [r, "the shared resources (src/auth/scopes.ts)"]));
const guards = new Map<string, string>();
const guardErrors = new Map<string, readonly string[]>();

/** The guard a resource's routes name by default (ScopeResource.guard), if its area declares one. */
export const guardOfResource = (resource: string): string | undefined => guards.get(resource);
/** The codes that guard refuses with (ScopeResource.guardErrors). */
export const guardErrorsOf = (resource: string): readonly string[] => guardErrors.get(resource) ?? [];

/**
 * Merges areas' scope resources (at start-up, from the areas list). A resource two owners declare is refused,
 * naming both, before anything is merged; an area declaring its own again (a second platform) is no duplicate.
 */
export function declareScopeResources(areas: readonly { area: string; scopes: ScopeTable }[]): void {
  const next = ownersWith(
    owners,
    areas.map(({ area, scopes }) => ({ area, names: Object.keys(scopes) })),
    "scope resource",
  );
  for (const { scopes } of areas) {
    for (const [resource, { instances, guard, guardErrors: refusals }] of Object.entries(scopes)) {
      if (!owners.has(resource)) (RESOURCES as Resource[]).push(resource as Resource);
      if (instances) (INSTANCE_LIMITED as Set<string>).add(resource);
      else (INSTANCE_LIMITED as Set<string>).delete(resource);
      if (guard) guards.set(resource, guard);
      else guards.delete(resource);
      if (guard && refusals?.length) guardErrors.set(resource, refusals);
      else guardErrors.delete(resource);
      owners.set(resource, next.get(resource)!);
    }
  }
}

export type Action = "read" | "write";

export interface Grant {
  resource: Resource | "*";
  action: Action | "*";
  instance: string | null;
}

const INSTANCE_REF = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

export function parseScope(text: string): Grant | null {
  if (text === "*") return { resource: "*", action: "*", instance: null };
  const parts = text.split(":");
  if (parts.length < 2 || parts.length > 3) return null;
  const [resource, action, instance] = parts;
  if (!(RESOURCES as readonly string[]).includes(resource)) return null;
  if (action !== "read" && action !== "write" && action !== "*") return null;
  if (instance !== undefined && (!INSTANCE_LIMITED.has(resource) || !INSTANCE_REF.test(instance))) return null;
  return { resource: resource as Resource, action, instance: instance ?? null };
}

function actionCovers(granted: Grant["action"], wanted: Action): boolean {
  return granted === "*" || granted === wanted || (granted === "write" && wanted === "read");
}

/** What a set of grants allows on one resource and action: everything, some instances, or nothing. */
export type Coverage = { kind: "all" } | { kind: "instances"; refs: string[] } | { kind: "none" };

export function coverage(grants: readonly Grant[], resource: Resource, action: Action): Coverage {
  const refs: string[] = [];
  for (const g of grants) {
    if (g.resource === "*") return { kind: "all" };
    if (g.resource !== resource || !actionCovers(g.action, action)) continue;
    if (g.instance === null) return { kind: "all" };
    refs.push(g.instance);
  }
  return refs.length ? { kind: "instances", refs } : { kind: "none" };
}
