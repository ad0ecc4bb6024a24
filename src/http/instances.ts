import type { Resource } from "../auth/scopes.js";

export interface InstanceIdentity {
  id: string;
  slug: string | null;
}

/** How an area finds one of its instances by id or slug, for instance-limited keys. */
export type InstanceLookup = (accountId: string, ref: string) => Promise<InstanceIdentity | null>;

export class InstanceRegistry {
  private lookups = new Map<Resource, InstanceLookup>();

  register(resource: Resource, lookup: InstanceLookup): void {
    this.lookups.set(resource, lookup);
  }

  /** True when the instance named by ref is one of the permitted refs, matching by id or slug. */
  async permits(resource: Resource, accountId: string, ref: string, permitted: string[]): Promise<boolean> {
    if (permitted.includes(ref)) return true;
    const lookup = this.lookups.get(resource);
    if (!lookup) return false;
    const found = await lookup(accountId, ref);
    return !!found && (permitted.includes(found.id) || (found.slug !== null && permitted.includes(found.slug)));
  }
}
