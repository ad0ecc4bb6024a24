import { allRows, anyRows, isUuid, oneRow, type Queryable } from "../../store/db.js";

export type OrgHostStatus = "pending" | "online" | "offline";

export interface OrgHostRow {
  id: string;
  org_id: string;
  name: string;
  region: string | null;
  created_by: string;
  bootstrap_expires_at: Date | null;
  registered_at: Date | null;
  machine_name: string | null;
  agent_version: string | null;
  gpu_slots: number;
  capacity: Record<string, unknown>;
  labels: Record<string, string>;
  heartbeat_seconds: number;
  last_heartbeat_at: Date | null;
  created_at: Date;
  /** computed: pending until registered, then online while beats arrive */
  status: OrgHostStatus;
}

/** Every column but the two hashes, with the status judged by the store's clock ($1 = HOST_MISSED_BEATS). */
const COLUMNS = `id, org_id, name, region, created_by, bootstrap_expires_at, registered_at, machine_name, agent_version,
  gpu_slots, capacity, labels, heartbeat_seconds, last_heartbeat_at, created_at,
  CASE WHEN registered_at IS NULL THEN 'pending'
       WHEN last_heartbeat_at > now() - make_interval(secs => heartbeat_seconds * $1::int) THEN 'online'
       ELSE 'offline' END AS status`;

export async function insertHost(
  q: Queryable,
  h: {
    id: string;
    orgId: string;
    name: string;
    region: string | null;
    createdBy: string;
    bootstrapHash: Buffer;
    expiresAt: Date;
    heartbeatSeconds: number;
  },
): Promise<void> {
  await q.query(
    `INSERT INTO org_hosts (id, org_id, name, region, created_by, bootstrap_hash, bootstrap_expires_at, heartbeat_seconds)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [h.id, h.orgId, h.name, h.region, h.createdBy, h.bootstrapHash, h.expiresAt, h.heartbeatSeconds],
  );
}

export async function listHosts(q: Queryable, orgId: string, missedBeats: number): Promise<OrgHostRow[]> {
  return allRows<OrgHostRow>(q, `SELECT ${COLUMNS} FROM org_hosts WHERE org_id = $2 ORDER BY created_at, id`, [
    missedBeats,
    orgId,
  ]);
}

export async function findHost(
  q: Queryable,
  orgId: string,
  id: string,
  missedBeats: number,
  opts: { forUpdate?: boolean } = {},
): Promise<OrgHostRow | null> {
  if (!isUuid(id)) return null;
  return oneRow<OrgHostRow>(
    q,
    `SELECT ${COLUMNS} FROM org_hosts WHERE org_id = $2 AND id = $3 ${opts.forUpdate ? "FOR UPDATE" : ""}`,
    [missedBeats, orgId, id],
  );
}

export async function setBootstrap(q: Queryable, id: string, hash: Buffer, expiresAt: Date): Promise<void> {
  await q.query(
    "UPDATE org_hosts SET bootstrap_hash = $2, bootstrap_expires_at = $3 WHERE id = $1 AND registered_at IS NULL",
    [id, hash, expiresAt],
  );
}

/**
 * Registration: the bootstrap token is consumed (cleared) in the same statement that stores the credential, so a
 * token works once, and only before it expires. Null: unknown, used or expired.
 */
export async function consumeBootstrap(
  q: Queryable,
  bootstrapHash: Buffer,
  r: {
    credentialHash: Buffer;
    machineName: string;
    agentVersion: string;
    gpuSlots: number;
    capacity: Record<string, unknown>;
    labels: Record<string, string>;
    heartbeatSeconds: number;
  },
): Promise<{ id: string; org_id: string } | null> {
  return oneRow<{ id: string; org_id: string }>(
    q,
    `UPDATE org_hosts SET bootstrap_hash = NULL, bootstrap_expires_at = NULL, credential_hash = $2,
        registered_at = now(), last_heartbeat_at = now(), machine_name = $3, agent_version = $4, gpu_slots = $5,
        capacity = $6, labels = $7, heartbeat_seconds = $8
      WHERE bootstrap_hash = $1 AND bootstrap_expires_at > now() AND registered_at IS NULL
      RETURNING id, org_id`,
    [
      bootstrapHash,
      r.credentialHash,
      r.machineName,
      r.agentVersion,
      r.gpuSlots,
      JSON.stringify(r.capacity),
      JSON.stringify(r.labels),
      r.heartbeatSeconds,
    ],
  );
}

/** The registered host an agent credential belongs to (null: unknown or revoked with its host). */
export async function hostByCredential(
  q: Queryable,
  credentialHash: Buffer,
  missedBeats: number,
): Promise<OrgHostRow | null> {
  return oneRow<OrgHostRow>(
    q,
    `SELECT ${COLUMNS} FROM org_hosts WHERE credential_hash = $2 AND registered_at IS NOT NULL`,
    [missedBeats, credentialHash],
  );
}

/** A heartbeat; true when the host had been offline (its pods are then reported again). */
export async function beat(q: Queryable, id: string, missedBeats: number): Promise<boolean> {
  const { rows } = await q.query<{ was_offline: boolean }>(
    `UPDATE org_hosts h SET last_heartbeat_at = now() FROM (SELECT id, last_heartbeat_at FROM org_hosts WHERE id = $1) old
      WHERE h.id = old.id
      RETURNING old.last_heartbeat_at <= now() - make_interval(secs => h.heartbeat_seconds * $2::int) AS was_offline`,
    [id, missedBeats],
  );
  return rows[0]?.was_offline ?? false;
}

export async function deleteHost(q: Queryable, id: string): Promise<void> {
  await q.query("DELETE FROM org_hosts WHERE id = $1", [id]);
}

/** Registered hosts whose agent stopped beating (every organization's): their pods become unknown. */
export async function offlineHosts(q: Queryable, missedBeats: number): Promise<{ id: string; name: string }[]> {
  return allRows<{ id: string; name: string }>(
    q,
    `SELECT id, name FROM org_hosts
      WHERE registered_at IS NOT NULL AND last_heartbeat_at <= now() - make_interval(secs => heartbeat_seconds * $1::int)`,
    [missedBeats],
  );
}

export async function isOrgHost(q: Queryable, id: string): Promise<boolean> {
  if (!isUuid(id)) return false;
  return anyRows(q, "SELECT 1 FROM org_hosts WHERE id = $1", [id]);
}

/** NOTIFY channel of migration 032: a pod placed on the host (payload: host id) changed what its agent must run. */
export const DESIRED_CHANNEL = "org_host_desired";

/** Subscribes the hub's own connection to that channel. */
export async function listenForDesired(client: Pick<Queryable, "query">): Promise<void> {
  await client.query(`LISTEN ${DESIRED_CHANNEL}`);
}
