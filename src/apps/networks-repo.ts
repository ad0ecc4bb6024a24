import { oneRow, type Queryable } from "../store/db.js";
import type { Owner } from "../kernel/owner.js";

export interface OwnerNetworkRow {
  name: string;
  subnet: string;
  gateway: string;
}

export async function findOwnerNetwork(q: Queryable, owner: Owner, hostId: string): Promise<OwnerNetworkRow | null> {
  return oneRow<OwnerNetworkRow>(
    q,
    "SELECT name, subnet, gateway FROM owner_networks WHERE owner_kind = $1 AND owner_id = $2 AND host_id = $3",
    [owner.kind, owner.id, hostId],
  );
}

export async function saveOwnerNetwork(q: Queryable, owner: Owner, hostId: string, n: OwnerNetworkRow): Promise<void> {
  await q.query(
    `INSERT INTO owner_networks (owner_kind, owner_id, host_id, name, subnet, gateway) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (owner_kind, owner_id, host_id) DO UPDATE SET name = $4, subnet = $5, gateway = $6`,
    [owner.kind, owner.id, hostId, n.name, n.subnet, n.gateway],
  );
}

/** Subnets the owner's containers connect from, on every host. */
export async function ownerSubnets(q: Queryable, owner: Owner): Promise<string[]> {
  const { rows } = await q.query<{ subnet: string }>(
    "SELECT subnet FROM owner_networks WHERE owner_kind = $1 AND owner_id = $2 ORDER BY host_id",
    [owner.kind, owner.id],
  );
  return rows.map((r) => r.subnet);
}
