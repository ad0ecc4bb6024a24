import type { MeteredResource } from "./contracts.js";
import type { OwnerColumns } from "./owned-repo.js";

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
