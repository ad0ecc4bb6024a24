import type { Resource } from "../auth/scopes.js";
import type { InstanceLookup } from "./contracts.js";
import type { Owner } from "./owner.js";

/**
 * The usual instance lookup (`instances` on an area's module): the area's own find by id or name, and of the
 * row found its id, the name an instance-limited key may also use (`slugOf`; none by default) and its creator.
 */
export function rowLookup<R extends { id: string; account_id: string }>(
  resource: Resource,
  find: (owner: Owner, ref: string) => Promise<R | null | undefined>,
  slugOf: (row: R) => string | null = () => null,
): InstanceLookup {
  return {
    resource,
    find: async (owner, ref) => {
      const row = await find(owner, ref);
      return row ? { id: row.id, slug: slugOf(row), accountId: row.account_id } : null;
    },
  };
}
