/**
 * The one registry through which areas serve each other (issue 25). A capability has one provider (`provide`,
 * then `use` / `require`); a contribution point gathers items from many areas (`contribute`, then `all`). Names and
 * types come from the two interfaces below, which each area augments in its own `contract.ts`:
 *
 *   declare module "../kernel/capabilities.js" {
 *     interface Capabilities { hosts: Hosts }
 *   }
 *
 * so the kernel names no area, and an area that offers something new touches no kernel file.
 */
import type { EdgeRouteSource, OwnerPolicy } from "./contracts.js";

/** Services with one provider, by name; each providing area adds its own in its contract.ts. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface Capabilities {}

/**
 * Contribution points by name, with the type of one item. The kernel's own (it calls them itself) are here; an
 * area that asks others for items adds its point in its contract.ts.
 */
export interface Contributions {
  /** what the edge serves under the apps domain, per area; kernel.appSlugTakenElsewhere asks them too */
  edgeRoutes: EdgeRouteSource;
  /** per owner kind, whose wallet pays and who may change assets (kernel.payer, kernel.assertMayManage) */
  ownerPolicies: OwnerPolicy;
}

export class CapabilityRegistry {
  private readonly providers = new Map<string, unknown>();
  private readonly items = new Map<string, unknown[]>();
  private readonly keys = new Map<string, Set<string>>();

  /** Registers the one provider of a capability (at an area's setup); a second one stops start-up. */
  provide<N extends keyof Capabilities>(name: N, impl: Capabilities[N]): void {
    if (this.providers.has(name)) throw new Error(`two providers of the capability "${name}"`);
    this.providers.set(name, impl);
  }

  /** Puts another implementation in place of a capability's provider (tests' doubles). */
  replace<N extends keyof Capabilities>(name: N, impl: Capabilities[N]): void {
    this.providers.set(name, impl);
  }

  /** The capability's provider, or null when no area of this platform provides it. */
  use<N extends keyof Capabilities>(name: N): Capabilities[N] | null {
    return (this.providers.get(name) as Capabilities[N] | undefined) ?? null;
  }

  /** The capability's provider; throws, naming it, when no area provides it. */
  require<N extends keyof Capabilities>(name: N): Capabilities[N] {
    const impl = this.use(name);
    if (impl === null) throw new Error(`no area provides the capability "${name}"`);
    return impl;
  }

  /** Adds an item to a contribution point; with `key`, a second item of the same key stops start-up. */
  contribute<N extends keyof Contributions>(name: N, item: Contributions[N], key?: string): void {
    if (key !== undefined) {
      const keys = this.keys.get(name) ?? new Set<string>();
      if (keys.has(key)) throw new Error(`two ${name} contributions for ${key}`);
      this.keys.set(name, keys.add(key));
    }
    const items = this.items.get(name) ?? [];
    items.push(item);
    this.items.set(name, items);
  }

  /** Every item contributed to the point, in registration order (none: empty). */
  all<N extends keyof Contributions>(name: N): readonly Contributions[N][] {
    return (this.items.get(name) ?? []) as Contributions[N][];
  }
}
