/**
 * Scale-to-zero's SQL (src/apps/idle): apps whose idle time may have passed, stopping them for idleness, and the
 * record of a wake. The last request's time is the edge's (src/edge/public.ts `lastRequests`).
 */
import { allRows, type Queryable } from "../../store/db.js";
import type { Owner } from "../../kernel/owner.js";

/** A pod or group with scale-to-zero on that has run at least its idle time since it last began to run. */
export interface IdleCandidate {
  kind: "pod" | "group";
  id: string;
  idle_stop_seconds: number;
  awake_since: Date;
  /** awake_since exactly (a Date keeps milliseconds only), to find the row unchanged */
  awake_key: string;
}

type Placed = { id: string; host_id: string | null };
type AppNamed = { owner_kind: Owner["kind"]; owner_id: string; name: string };

/** What an idle stop changed: the app (its owner and name, for the event) and the pods whose containers stop. */
export interface IdleStopped {
  app: AppNamed;
  members: Placed[];
}

/**
 * Running standalone pods and groups whose idle time has passed since awake_since (requests are checked after).
 * An app woken less than a minute ago (the edge's default EDGE_WAKE_TIMEOUT_MS) and not yet serving is not idle:
 * the edge holds requests for it that are not counted yet, and stopping it then would turn them into 503s (seen
 * with a 1 s idle time). One that never became ready after a create or a longer wait can still be stopped.
 * `ready` alone is no proof of serving: it keeps the verdict from before the idle stop until the woken replica's is
 * recorded (with `state` running); once it serves, its idle clock starts again (reconciler.ts, awake_since).
 */
export async function idleCandidates(q: Queryable, limit = 500): Promise<IdleCandidate[]> {
  return allRows<IdleCandidate>(
    q,
    `(SELECT 'pod' AS kind, id::text, idle_stop_seconds, awake_since, awake_since::text AS awake_key FROM pods
       WHERE idle_stop_seconds IS NOT NULL AND desired_state = 'running' AND group_id IS NULL
         AND ((state = 'running' AND ready) OR woken_at IS NULL OR woken_at < now() - interval '1 minute')
         AND awake_since < now() - make_interval(secs => idle_stop_seconds) LIMIT $1)
     UNION ALL
     (SELECT 'group', id::text, idle_stop_seconds, awake_since, awake_since::text FROM pod_groups
       WHERE idle_stop_seconds IS NOT NULL AND desired_state = 'running'
         AND (woken_at IS NULL OR woken_at < now() - interval '1 minute'
              OR EXISTS (SELECT 1 FROM pods p WHERE p.group_id = pod_groups.id AND p.desired_state = 'running'
                           AND p.state = 'running' AND p.ready))
         AND awake_since < now() - make_interval(secs => idle_stop_seconds) LIMIT $1)`,
    [limit],
  );
}

/**
 * Stops a pod for idleness if it is still as the sweep saw it (running, the same awake_since, idle time still
 * passed since `lastActive`); returns its host when it did. The reconciler then removes its containers.
 */
export async function idleStopPod(
  q: Queryable,
  id: string,
  awakeKey: string,
  lastActive: Date,
): Promise<IdleStopped | null> {
  const { rows } = await q.query<Placed & AppNamed>(
    `UPDATE pods SET desired_state = 'idle_stopped', state_reason = 'stopped while idle', updated_at = now()
      WHERE id = $1 AND desired_state = 'running' AND awake_since = $2::timestamptz
        AND idle_stop_seconds IS NOT NULL AND $3::timestamptz < now() - make_interval(secs => idle_stop_seconds)
      RETURNING id, host_id, owner_kind, owner_id, name`,
    [id, awakeKey, lastActive],
  );
  const r = rows[0];
  return r ? { app: r, members: [r] } : null;
}

/** The group for idleness, under the same conditions; its running members with it. Returns the members stopped. */
export async function idleStopGroup(
  q: Queryable,
  id: string,
  awakeKey: string,
  lastActive: Date,
): Promise<IdleStopped | null> {
  const { rows: groups } = await q.query<AppNamed>(
    `UPDATE pod_groups SET desired_state = 'idle_stopped'
      WHERE id = $1 AND desired_state = 'running' AND awake_since = $2::timestamptz
        AND idle_stop_seconds IS NOT NULL AND $3::timestamptz < now() - make_interval(secs => idle_stop_seconds)
      RETURNING owner_kind, owner_id, name`,
    [id, awakeKey, lastActive],
  );
  if (!groups[0]) return null;
  const { rows } = await q.query<Placed>(
    `UPDATE pods SET desired_state = 'idle_stopped', state_reason = 'stopped while idle', updated_at = now()
      WHERE group_id = $1 AND desired_state = 'running' RETURNING id, host_id`,
    [id],
  );
  return { app: groups[0], members: rows };
}

/** A group woken: running again from now, woken now (the edge holds requests while members start). */
export async function markGroupWoken(q: Queryable, id: string): Promise<void> {
  await q.query(
    "UPDATE pod_groups SET desired_state = 'running', awake_since = now(), woken_at = now() WHERE id = $1",
    [id],
  );
}

export async function markPodWoken(q: Queryable, id: string): Promise<void> {
  await q.query("UPDATE pods SET woken_at = now(), wakes = wakes + 1, state_reason = NULL WHERE id = $1", [id]);
}

/** A woken group's member serves: the group's idle clock starts again now (reconciler.ts). */
export async function restartGroupIdleClock(q: Queryable, id: string): Promise<void> {
  await q.query("UPDATE pod_groups SET awake_since = now() WHERE id = $1 AND desired_state = 'running'", [id]);
}

/** The scale-to-zero setting changed: its idle clock starts again now. */
export async function setPodIdleStop(q: Queryable, id: string, seconds: number | null): Promise<void> {
  await q.query("UPDATE pods SET idle_stop_seconds = $2, awake_since = now(), updated_at = now() WHERE id = $1", [
    id,
    seconds,
  ]);
}
