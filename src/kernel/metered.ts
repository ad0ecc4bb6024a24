import type { MeteredResource, MeteringSource } from "./contracts.js";
import type { OwnerColumns } from "./owned-repo.js";
import { billableOfOwner, billablePage, type MeteredTable } from "./metered-repo.js";

/** A billable row as billing meters it: at `size`'s price, with `storageGb` of storage (0: none). */
export const meteredResource = (
  r: OwnerColumns,
  kind: string,
  size: string,
  storageGb: number,
  state: MeteredResource["state"] = "running",
): MeteredResource => ({
  id: r.id,
  owner: { kind: r.owner_kind, id: r.owner_id },
  accountId: r.account_id,
  kind,
  size,
  storageGb,
  state,
});

/** The usual metering source: one table's billable rows, a page of billing's walk or one owner's, each priced by `metered`. */
export function tableMetering<R extends OwnerColumns>(
  kind: string,
  t: MeteredTable,
  metered: (r: R) => MeteredResource,
  describe?: MeteringSource["describe"],
): MeteringSource {
  return {
    kind,
    billable: async (q, page) => (await billablePage<R>(q, t, page)).map(metered),
    billableOf: async (q, owner) => (await billableOfOwner<R>(q, t, owner)).map(metered),
    ...(describe ? { describe } : {}),
  };
}
