/**
 * Scope grammar (spec, Authentication): `*`, `resource:read|write|*`, and for the instance-limited
 * resources `resource:action:{id|slug}`. A write grant includes read on the same resource.
 */
export const RESOURCES = [
  "pods",
  "databases",
  "volumes",
  "static",
  "backups",
  "billing",
  "pod-templates",
  "domains",
  "sandboxes",
  "buckets",
  "registry",
  "builds",
  "partner",
  "org",
  "linked-apps",
] as const;
export type Resource = (typeof RESOURCES)[number];

export const INSTANCE_LIMITED: ReadonlySet<string> = new Set([
  "pods",
  "databases",
  "volumes",
  "static",
  "pod-templates",
  "domains",
  "sandboxes",
  "buckets",
  "registry",
  "builds",
]);

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
