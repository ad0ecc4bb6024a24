import { allRows, type Queryable } from "../store/db.js";
import type { HostRole } from "./contract.js";

export interface HostRow {
  id: string;
  name: string;
  roles: HostRole[];
  capacity: Record<string, unknown>;
  heartbeat_seconds: number;
  registered_at: Date;
  started_at: Date;
  last_heartbeat_at: Date;
  /** computed: a heartbeat within heartbeat_seconds × missed beats */
  available: boolean;
}

export interface ProcessRow {
  id: string;
  host_id: string;
  pid: number;
  roles: HostRole[];
  started_at: Date;
  last_heartbeat_at: Date;
  alive: boolean;
}

/** A heartbeat counts for the host's own interval times the missed beats allowed. */
const FRESH = "last_heartbeat_at > now() - make_interval(secs => heartbeat_seconds * $MISSED)";
const fresh = (param: number) => FRESH.replace("$MISSED", `$${param}`);

/** Registers the host (or refreshes its record after a restart): name, roles and capacity are the latest process's. */
export async function upsertHost(
  q: Queryable,
  h: { id: string; name: string; roles: HostRole[]; capacity: Record<string, unknown>; heartbeatSeconds: number },
): Promise<void> {
  await q.query(
    `INSERT INTO hosts (id, name, roles, capacity, heartbeat_seconds) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, roles = EXCLUDED.roles, capacity = EXCLUDED.capacity,
       heartbeat_seconds = EXCLUDED.heartbeat_seconds, started_at = now(), last_heartbeat_at = now()`,
    [h.id, h.name, h.roles, h.capacity, h.heartbeatSeconds],
  );
}

export async function heartbeat(q: Queryable, hostId: string, processId: string | null): Promise<void> {
  await q.query("UPDATE hosts SET last_heartbeat_at = now() WHERE id = $1", [hostId]);
  if (processId) await q.query("UPDATE host_processes SET last_heartbeat_at = now() WHERE id = $1", [processId]);
}

export async function insertProcess(
  q: Queryable,
  p: { id: string; hostId: string; pid: number; roles: HostRole[] },
): Promise<void> {
  await q.query("INSERT INTO host_processes (id, host_id, pid, roles) VALUES ($1, $2, $3, $4)", [
    p.id,
    p.hostId,
    p.pid,
    p.roles,
  ]);
  // a week of history per host is plenty for an operator looking at restarts
  await q.query(
    "DELETE FROM host_processes WHERE host_id = $1 AND started_at < now() - interval '7 days' AND id <> $2",
    [p.hostId, p.id],
  );
}

export async function stopProcess(q: Queryable, processId: string): Promise<void> {
  await q.query("UPDATE host_processes SET stopped_at = now() WHERE id = $1", [processId]);
}

export async function isAvailable(q: Queryable, hostId: string, missedBeats: number): Promise<boolean> {
  const { rows } = await q.query<{ ok: boolean }>(`SELECT ${fresh(2)} AS ok FROM hosts WHERE id = $1`, [
    hostId,
    missedBeats,
  ]);
  return rows[0]?.ok ?? false;
}

/** An available host with the given role, at random (spreads new resources until capacity is weighed). */
export async function pickAvailable(q: Queryable, role: HostRole, missedBeats: number): Promise<string | null> {
  const { rows } = await q.query<{ id: string }>(
    `SELECT id FROM hosts WHERE $1 = ANY(roles) AND ${fresh(2)} ORDER BY random() LIMIT 1`,
    [role, missedBeats],
  );
  return rows[0]?.id ?? null;
}

export async function listHosts(q: Queryable, missedBeats: number): Promise<HostRow[]> {
  return allRows<HostRow>(q, `SELECT *, ${fresh(1)} AS available FROM hosts ORDER BY registered_at, id`, [missedBeats]);
}

/** Processes not stopped that beat within the last hour, newest first. */
export async function listProcesses(q: Queryable, missedBeats: number): Promise<ProcessRow[]> {
  return allRows<ProcessRow>(
    q,
    `SELECT p.id, p.host_id, p.pid, p.roles, p.started_at, p.last_heartbeat_at,
            p.last_heartbeat_at > now() - make_interval(secs => h.heartbeat_seconds * $1) AS alive
       FROM host_processes p JOIN hosts h ON h.id = p.host_id
      WHERE p.stopped_at IS NULL AND p.last_heartbeat_at > now() - interval '1 hour'
      ORDER BY p.started_at DESC`,
    [missedBeats],
  );
}
